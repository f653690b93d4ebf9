// INVITE client transactions (RFC 3261 §17.1.1 with RFC 6026): the INVITE retransmitted on UDP
// (Timer A, T1 doubling) until any response, a local 408 when none comes within 64·T1 (Timer B),
// a local 503 as soon as its connection fails (refused, reset: RFC 3261 §8.1.3.1), a non-2xx
// final response acknowledged here with the same branch (and again for each retransmission,
// Timer D), and every 2xx passed up, retransmissions too, for 64·T1: the dialog acknowledges
// those itself (a new branch, to the remote target).
import type { Clock, TimerHandle } from "../../../src/core/clock.ts";
import { localTimeout, transportError } from "../client-transaction.ts";
import type { SipFlow } from "../flow.ts";
import {
  header,
  headerValues,
  parseCSeq,
  parseVia,
  type SipHeader,
  type SipRequest,
  type SipResponse,
} from "../message.ts";
import { serialize } from "../serialize.ts";
import type { SipTimers } from "../transaction.ts";

/** Each response to the INVITE: provisional, final, and 2xx retransmissions (`again`). */
export type InviteResponseHandler = (res: SipResponse, again: boolean) => void;

interface Live {
  readonly request: SipRequest;
  readonly flow: SipFlow;
  readonly onResponse: InviteResponseHandler;
  /** The final status seen (0 while none). */
  final: number;
  ack?: Buffer;
  retransmit?: TimerHandle;
  timeout?: TimerHandle;
  linger?: TimerHandle;
  /** Stops hearing the connection's failure (once a final response came). */
  unlisten?: () => void;
}

export class InviteClients {
  readonly #clock: Clock;
  readonly #timers: SipTimers;
  readonly #live = new Map<string, Live>();

  constructor(clock: Clock, timers: SipTimers) {
    this.#clock = clock;
    this.#timers = timers;
  }

  get size(): number {
    return this.#live.size;
  }

  /** Sends the INVITE (its top Via carries a fresh branch); responses go to `onResponse`. */
  send(request: SipRequest, flow: SipFlow, onResponse: InviteResponseHandler): void {
    const branch = parseVia(headerValues(request, "via")[0] ?? "")?.branch;
    if (!branch) throw new Error("INVITE needs a top Via with a branch");
    const bytes = serialize(request);
    const t: Live = { request, flow, onResponse, final: 0 };
    this.#live.set(branch, t);
    flow.send(bytes);
    const again = (interval: number): void => {
      t.retransmit = this.#clock.setTimeout(() => {
        flow.send(bytes);
        again(2 * interval);
      }, interval);
    };
    if (!flow.reliable) again(this.#timers.t1);
    t.timeout = this.#clock.setTimeout(() => {
      this.#clock.clearTimeout(t.retransmit);
      t.unlisten?.();
      this.#live.delete(branch);
      onResponse(localTimeout(request), false);
    }, 64 * this.#timers.t1);
    // Subscribed last: a connection that has already failed calls back at once.
    t.unlisten = flow.onError?.((why) => {
      if (this.#live.get(branch) !== t || t.final) return;
      this.#clock.clearTimeout(t.retransmit);
      this.#clock.clearTimeout(t.timeout);
      this.#live.delete(branch);
      t.final = 503;
      onResponse(transportError(request, why), false);
    });
  }

  /** Offers a response; false when it belongs to no INVITE of ours. */
  receive(res: SipResponse): boolean {
    if (parseCSeq(header(res, "cseq"))?.method !== "INVITE") return false;
    const branch = parseVia(headerValues(res, "via")[0] ?? "")?.branch ?? "";
    const t = this.#live.get(branch);
    if (!t) return false;
    this.#clock.clearTimeout(t.retransmit);
    this.#clock.clearTimeout(t.timeout);
    if (res.status < 200) {
      if (!t.final) t.onResponse(res, false);
      return true;
    }
    if (res.status >= 300) {
      // Acknowledged by the transaction; a retransmitted final response gets the same ACK again.
      t.ack ??= serialize(ackFor(t.request, res));
      t.flow.send(t.ack);
      if (!t.final) {
        t.final = res.status;
        t.unlisten?.();
        t.onResponse(res, false);
        this.#linger(branch, t, t.flow.reliable ? 0 : 32_000);
      }
      return true;
    }
    const again = t.final >= 200 && t.final < 300;
    if (!t.final) {
      t.final = res.status;
      t.unlisten?.();
      this.#linger(branch, t, 64 * this.#timers.t1);
    }
    t.onResponse(res, again);
    return true;
  }

  #linger(branch: string, t: Live, ms: number): void {
    t.linger = this.#clock.setTimeout(() => {
      if (this.#live.get(branch) === t) this.#live.delete(branch);
    }, ms);
  }

  dispose(): void {
    for (const t of this.#live.values()) {
      t.unlisten?.();
      for (const h of [t.retransmit, t.timeout, t.linger]) this.#clock.clearTimeout(h);
    }
    this.#live.clear();
  }
}

/** The ACK of a non-2xx final response (RFC 3261 §17.1.1.3): the INVITE's branch, Route and URI. */
function ackFor(invite: SipRequest, res: SipResponse): SipRequest {
  const seq = parseCSeq(header(invite, "cseq"))?.seq ?? 1;
  const headers: SipHeader[] = [
    { name: "via", value: headerValues(invite, "via")[0]! },
    { name: "max-forwards", value: "70" },
    { name: "from", value: header(invite, "from") ?? "" },
    { name: "to", value: header(res, "to") ?? header(invite, "to") ?? "" },
    { name: "call-id", value: header(invite, "call-id") ?? "" },
    { name: "cseq", value: `${seq} ACK` },
    ...invite.headers.filter((h) => h.name === "route"),
  ];
  return { kind: "request", method: "ACK", uri: invite.uri, headers, body: Buffer.alloc(0) };
}
