// Server transactions (RFC 3261 §17.2, with RFC 6026's Accepted state) and non-INVITE client
// transactions (§17.1.2). Requests are matched by top Via branch, sent-by and method; a
// retransmitted request gets the last response again; UDP final responses are retransmitted on
// Timer G until the ACK; every timer runs on the injectable Clock.
import type { Clock, TimerHandle } from "../../src/core/clock.ts";
import type { SipFlow } from "./flow.ts";
import {
  header,
  headerValues,
  params,
  parseCSeq,
  parseVia,
  type SipRequest,
  type SipResponse,
} from "./message.ts";
import { makeResponse, serialize } from "./serialize.ts";

export interface SipTimers {
  /** RTT estimate, ms (RFC 3261: 500). */
  readonly t1: number;
  /** Longest retransmit interval for non-INVITE requests and INVITE responses, ms (4000). */
  readonly t2: number;
  /** Longest time a message stays in the network, ms (5000). */
  readonly t4: number;
}

export const DEFAULT_TIMERS: SipTimers = { t1: 500, t2: 4000, t4: 5000 };

type ServerState = "proceeding" | "completed" | "confirmed" | "accepted" | "terminated";

export class ServerTransaction {
  readonly key: string;
  readonly request: SipRequest;
  readonly flow: SipFlow;
  #state: ServerState = "proceeding";
  #last?: Buffer;
  #retransmit?: TimerHandle;
  #timeout?: TimerHandle;
  readonly #layer: ServerTransactions;

  constructor(layer: ServerTransactions, key: string, request: SipRequest, flow: SipFlow) {
    this.#layer = layer;
    this.key = key;
    this.request = request;
    this.flow = flow;
  }

  get state(): ServerState {
    return this.#state;
  }

  /** A final response has gone out. */
  get answered(): boolean {
    return this.#state !== "proceeding";
  }

  /** Sends a response; after a final one, later calls are ignored. */
  respond(res: SipResponse): void {
    if (this.answered) return;
    const bytes = serialize(res);
    this.#last = bytes;
    this.flow.send(bytes);
    if (res.status < 200) return;
    const { clock, timers } = this.#layer;
    const invite = this.request.method === "INVITE";
    if (invite && res.status < 300) {
      // The UAS core retransmits the 2xx itself; here only INVITE retransmissions are absorbed (Timer L).
      this.#state = "accepted";
      this.#timeout = clock.setTimeout(() => this.#terminate(), 64 * timers.t1);
    } else if (invite) {
      this.#state = "completed";
      if (!this.flow.reliable) this.#scheduleG(timers.t1);
      this.#timeout = clock.setTimeout(() => {
        this.#layer.onAckTimeout?.(this);
        this.#terminate();
      }, 64 * timers.t1);
    } else {
      this.#state = "completed";
      this.#timeout = clock.setTimeout(() => this.#terminate(), this.flow.reliable ? 0 : 64 * timers.t1);
    }
  }

  /** A retransmission of the request arrived: the last response again (nothing before the first). */
  retransmitted(): void {
    if (this.#last) {
      this.flow.send(this.#last);
    }
  }

  /** The ACK for a non-2xx final response (Timer I absorbs its retransmissions). */
  acked(): void {
    if (this.#state !== "completed") return;
    this.#state = "confirmed";
    this.#layer.clock.clearTimeout(this.#retransmit);
    this.#layer.clock.clearTimeout(this.#timeout);
    this.#timeout = this.#layer.clock.setTimeout(
      () => this.#terminate(),
      this.flow.reliable ? 0 : this.#layer.timers.t4,
    );
  }

  #scheduleG(interval: number): void {
    this.#retransmit = this.#layer.clock.setTimeout(() => {
      if (this.#state !== "completed") return;
      this.retransmitted();
      this.#scheduleG(Math.min(2 * interval, this.#layer.timers.t2));
    }, interval);
  }

  #terminate(): void {
    this.#state = "terminated";
    this.#layer.clock.clearTimeout(this.#retransmit);
    this.#layer.clock.clearTimeout(this.#timeout);
    this.#layer.remove(this);
  }

  /** Drops timers at once (server shutdown). */
  dispose(): void {
    this.#terminate();
  }
}

export type Incoming =
  /** A new request: the core must answer through `tx`. */
  | { readonly type: "new"; readonly tx: ServerTransaction }
  /** An ACK with no transaction (the ACK for a 2xx): the core matches it to a dialog. */
  | { readonly type: "ack" }
  /** A retransmission or an ACK the transaction layer absorbed. */
  | { readonly type: "absorbed" };

/** Key for matching (RFC 3261 §17.2.3): branch + sent-by + method, ACK matched to its INVITE. */
export function transactionKey(req: SipRequest, method = req.method): string | undefined {
  const top = headerValues(req, "via")[0];
  const via = top ? parseVia(top) : undefined;
  if (!via) return undefined;
  const m = method === "ACK" ? "INVITE" : method;
  if (via.branch?.startsWith("z9hG4bK")) return `${via.branch}|${via.host}:${via.port ?? ""}|${m}`;
  // RFC 2543 peers: no magic cookie, so Call-ID, CSeq number, From tag and the Via itself.
  const cseq = parseCSeq(header(req, "cseq"));
  const fromTag = params(header(req, "from") ?? "").get("tag") ?? "";
  return `2543|${header(req, "call-id")}|${cseq?.seq}|${fromTag}|${top}|${m}`;
}

export class ServerTransactions {
  readonly clock: Clock;
  readonly timers: SipTimers;
  /** A non-2xx INVITE response never got its ACK (Timer H). */
  onAckTimeout?: (tx: ServerTransaction) => void;
  readonly #live = new Map<string, ServerTransaction>();

  constructor(clock: Clock, timers: SipTimers) {
    this.clock = clock;
    this.timers = timers;
  }

  get size(): number {
    return this.#live.size;
  }

  /** Routes a request (already checked to carry a Via) through the layer. */
  receive(req: SipRequest, flow: SipFlow): Incoming {
    const key = transactionKey(req) ?? `novia|${Math.random()}`;
    const existing = this.#live.get(key);
    if (req.method === "ACK") {
      if (existing && existing.state !== "accepted") {
        existing.acked();
        return { type: "absorbed" };
      }
      return { type: "ack" };
    }
    if (existing) {
      existing.retransmitted();
      return { type: "absorbed" };
    }
    const tx = new ServerTransaction(this, key, req, flow);
    this.#live.set(key, tx);
    if (req.method === "INVITE") tx.respond(makeResponse(req, 100));
    return { type: "new", tx };
  }

  /** The INVITE transaction a CANCEL targets (same branch, RFC 3261 §9.2). */
  inviteFor(cancel: SipRequest): ServerTransaction | undefined {
    const key = transactionKey(cancel, "INVITE");
    return key ? this.#live.get(key) : undefined;
  }

  remove(tx: ServerTransaction): void {
    if (this.#live.get(tx.key) === tx) this.#live.delete(tx.key);
  }

  dispose(): void {
    for (const tx of [...this.#live.values()]) tx.dispose();
  }
}
