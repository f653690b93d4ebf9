// A hosted service's failures, played where a hosted service shows them: E1–E3 refused with 503
// after their round trip (chat503), E6 refused with 503 as it arrives (asr503), an E5 session
// closed with 1011 after its first audio (ttsCut), an E1 stream that stops after its first words
// and holds the connection (chatStall). Each kind draws from a seeded sequence of its own, so the
// same traffic meets the same faults run after run and one kind's traffic never shifts another's
// draws; what was played is counted per kind, for tests and benchmarks.
import type { Logger } from "pino";
import { type Random, seededRandom } from "../engines/image/prng.ts";
import { ApiError } from "../errors.ts";
import type { MessageSocket } from "./delayed-socket.ts";

export const FAULT_KINDS = ["chat503", "asr503", "ttsCut", "chatStall"] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** The faults to play (the config's `local.faults`, structurally): each kind's probability, 0–1. */
export type FaultProfile = { readonly [K in FaultKind]: number } & { readonly seed: number };

export const NO_FAULTS: FaultProfile = { chat503: 0, asr503: 0, ttsCut: 0, chatStall: 0, seed: 1 };

/** The longest a stalled stream is held open when its client stays: then its connection is cut. */
export const STALL_MAX_MS = 120_000;

/** `chat503=0.3,ttsCut=0.2 seed 1` (the kinds that are played), or `none`. */
export function describeFaults(p: FaultProfile): string {
  const on = FAULT_KINDS.filter((k) => p[k] > 0);
  return on.length === 0 ? "none" : `${on.map((k) => `${k}=${p[k]}`).join(",")} seed ${p.seed}`;
}

export class Faults {
  readonly profile: FaultProfile;
  private readonly draws: Record<FaultKind, Random>;
  private readonly counts: Record<FaultKind, number> = { chat503: 0, asr503: 0, ttsCut: 0, chatStall: 0 };

  constructor(profile: FaultProfile = NO_FAULTS) {
    this.profile = profile;
    const draw = (kind: FaultKind) => seededRandom("faults", profile.seed, kind);
    this.draws = {
      chat503: draw("chat503"),
      asr503: draw("asr503"),
      ttsCut: draw("ttsCut"),
      chatStall: draw("chatStall"),
    };
  }

  /** Whether any kind is played. */
  get active(): boolean {
    return FAULT_KINDS.some((k) => this.profile[k] > 0);
  }

  /** Whether this exchange meets `kind`: the next draw of its sequence. Not counted until played. */
  meets(kind: FaultKind): boolean {
    const p = this.profile[kind];
    return p > 0 && this.draws[kind]() < p;
  }

  /** Counts a fault as played, and says so at debug level (a benchmark counts them in the log). */
  played(kind: FaultKind, log?: Pick<Logger, "debug">): void {
    this.counts[kind]++;
    log?.debug({ fault: kind }, "playing a fault");
  }

  /** Faults played so far, per kind. */
  snapshot(): Readonly<Record<FaultKind, number>> {
    return { ...this.counts };
  }
}

/** The 503 a refused request gets: the service's one error body, as its own overload says it. */
export function overloaded(what: string): ApiError {
  return new ApiError(503, `${what} is overloaded: try again later`, { code: "overloaded" });
}

/**
 * `socket` closed by the server with 1011 right after the first `tts.response.audio.delta` it
 * sends, and nothing sent after that; `onCut` hears the cut. Wrapped around the latency-delayed
 * socket, so the cut leaves after the audio and everything before it, in order.
 */
export function cutAfterFirstAudio(socket: MessageSocket, onCut: () => void): MessageSocket {
  let cut = false;
  return {
    send(data) {
      if (cut) return;
      socket.send(data);
      if (!data.startsWith('{"type":"tts.response.audio.delta"')) return;
      cut = true;
      socket.close(1011, "internal error");
      onCut();
    },
    close(code, reason) {
      if (!cut) socket.close(code, reason);
    },
  };
}

/** Resolves when `gone` aborts (the client went away) or after `maxMs`, whichever comes first. */
export function heldUntilGone(gone: AbortSignal, maxMs = STALL_MAX_MS): Promise<void> {
  if (gone.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      gone.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, maxMs);
    gone.addEventListener("abort", done, { once: true });
  });
}
