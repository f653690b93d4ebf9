// What the three chat routes share: the engine, media resolution in the caller's account, and a
// per-account cap on concurrent generations (beyond it: 429).

import { tooMany } from "../../errors.ts";
import { type Generation, startGeneration } from "../../generation/pipeline.ts";
import type { GenRequest } from "../../generation/request.ts";
import type { MediaResolver } from "../../media/resolve.ts";
import type { ChatEngine } from "./engine.ts";

export interface ChatServiceOptions {
  engine: ChatEngine;
  media: MediaResolver;
  /** Concurrent generations per account; default 256. */
  maxConcurrent?: number;
  /** Idle time after which a messages stream sends a ping; default 5000 ms. */
  pingIntervalMs?: number;
}

export class ChatService {
  readonly engine: ChatEngine;
  readonly media: MediaResolver;
  readonly pingIntervalMs: number;
  private readonly maxConcurrent: number;
  private readonly active = new Map<string, number>();

  constructor(opts: ChatServiceOptions) {
    this.engine = opts.engine;
    this.media = opts.media;
    this.maxConcurrent = opts.maxConcurrent ?? 256;
    this.pingIntervalMs = opts.pingIntervalMs ?? 5000;
  }

  /** Reserves a generation slot for the account; call the returned function when done. */
  acquire(account: string): () => void {
    const n = this.active.get(account) ?? 0;
    if (n >= this.maxConcurrent) {
      throw tooMany(
        `too many concurrent generations for this API key (at most ${this.maxConcurrent}); retry shortly`,
      );
    }
    this.active.set(account, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.active.get(account) ?? 1) - 1;
      if (left <= 0) this.active.delete(account);
      else this.active.set(account, left);
    };
  }

  /** Resolves the request's media in the account; returns the temp-file cleanup. */
  prepare(req: GenRequest, account: string): Promise<() => Promise<void>> {
    return this.media.resolveAll(req, account);
  }

  start(req: GenRequest, signal: AbortSignal): Promise<Generation> {
    return startGeneration(this.engine, req, signal);
  }
}
