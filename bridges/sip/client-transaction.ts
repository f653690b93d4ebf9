// Non-INVITE client transactions (RFC 3261 §17.1.2) for the requests we send outside an INVITE
// (REGISTER, BYE, REFER): Timer E retransmits on UDP from T1 doubling to T2 (T2 once a provisional
// came), Timer F gives up after 64·T1 with a local 408, a failed connection (refused, reset) ends
// the transaction at once with a local 503 (RFC 3261 §8.1.3.1), Timer K absorbs response
// retransmissions.
import type { Clock, TimerHandle } from "../../src/core/clock.ts";
import type { SipFlow } from "./flow.ts";
import { header, headerValues, parseCSeq, parseVia, type SipRequest, type SipResponse } from "./message.ts";
import { serialize } from "./serialize.ts";
import type { SipTimers } from "./transaction.ts";

interface Pending {
  readonly method: string;
  readonly resolve: (res: SipResponse) => void;
  final: boolean;
  /** A provisional response came: retransmit at T2 from now on (RFC 3261 §17.1.2.2). */
  provisional: boolean;
  retransmit?: TimerHandle;
  timeout?: TimerHandle;
  /** Stops hearing the connection's failure. */
  unlisten?: () => void;
}

export class ClientTransactions {
  readonly #clock: Clock;
  readonly #timers: SipTimers;
  readonly #live = new Map<string, Pending>();

  constructor(clock: Clock, timers: SipTimers) {
    this.#clock = clock;
    this.#timers = timers;
  }

  get size(): number {
    return this.#live.size;
  }

  /** Sends `req` (whose top Via carries a fresh branch); resolves with the final response or a local 408. */
  send(req: SipRequest, flow: SipFlow): Promise<SipResponse> {
    const branch = parseVia(headerValues(req, "via")[0] ?? "")?.branch;
    if (!branch) throw new Error(`${req.method} needs a top Via with a branch`);
    const key = `${branch}|${req.method}`;
    const bytes = serialize(req);
    return new Promise<SipResponse>((resolve) => {
      const p: Pending = { method: req.method, resolve, final: false, provisional: false };
      this.#live.set(key, p);
      flow.send(bytes);
      const again = (interval: number): void => {
        p.retransmit = this.#clock.setTimeout(() => {
          if (p.final) return;
          flow.send(bytes);
          again(p.provisional ? this.#timers.t2 : Math.min(2 * interval, this.#timers.t2));
        }, interval);
      };
      if (!flow.reliable) again(this.#timers.t1);
      p.timeout = this.#clock.setTimeout(() => {
        this.#finish(key, p);
        resolve(localTimeout(req));
      }, 64 * this.#timers.t1);
      // Without this a REGISTER on a refused connection would wait the whole 32 s of Timer F.
      p.unlisten = flow.onError?.((why) => {
        if (p.final) return;
        this.#finish(key, p);
        resolve(transportError(req, why));
      });
    });
  }

  /** Offers a response to the layer; false when no transaction of ours matches it. */
  receive(res: SipResponse): boolean {
    const branch = parseVia(headerValues(res, "via")[0] ?? "")?.branch;
    const cseq = parseCSeq(header(res, "cseq"));
    const key = `${branch}|${cseq?.method}`;
    const p = this.#live.get(key);
    if (!p) return false;
    if (p.final) return true; // a retransmitted final response, absorbed (Timer K)
    if (res.status < 200) {
      p.provisional = true;
      return true;
    }
    this.#finish(key, p);
    p.resolve(res);
    return true;
  }

  #finish(key: string, p: Pending): void {
    p.final = true;
    p.unlisten?.();
    this.#clock.clearTimeout(p.retransmit);
    this.#clock.clearTimeout(p.timeout);
    // Timer K keeps the entry long enough to recognize retransmitted responses.
    p.timeout = this.#clock.setTimeout(() => this.#live.delete(key), this.#timers.t4);
  }

  dispose(): void {
    for (const p of this.#live.values()) {
      p.unlisten?.();
      this.#clock.clearTimeout(p.retransmit);
      this.#clock.clearTimeout(p.timeout);
      if (!p.final)
        p.resolve({
          kind: "response",
          status: 503,
          reason: "Server Closed",
          headers: [],
          body: Buffer.alloc(0),
        });
    }
    this.#live.clear();
  }
}

/** What no answer within Timer F (B for an INVITE) is to the transaction user. */
export function localTimeout(req: SipRequest): SipResponse {
  return {
    kind: "response",
    status: 408,
    reason: "Request Timeout (no response)",
    headers: req.headers,
    body: Buffer.alloc(0),
  };
}

/** What a transport error is to the transaction user (RFC 3261 §8.1.3.1). */
export function transportError(req: SipRequest, why: string): SipResponse {
  return {
    kind: "response",
    status: 503,
    reason: `Service Unavailable (transport error: ${why})`,
    headers: req.headers,
    body: Buffer.alloc(0),
  };
}
