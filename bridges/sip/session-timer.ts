// RFC 4028 session timers, as a UAS that never requires them: a Session-Expires in the request
// is echoed with the refresher left to the caller (refresher=uac), and if no refresh (re-INVITE or
// UPDATE) arrives within the interval less min(32 s, interval/3), the call is hung up.
import type { Clock, TimerHandle } from "../../src/core/clock.ts";
import { header, type SipHeader, type SipRequest } from "./message.ts";
import { makeResponse } from "./serialize.ts";
import type { ServerTransaction } from "./transaction.ts";

/** Smallest interval we accept, seconds (RFC 4028's floor). */
export const MIN_SE = 90;

function interval(req: SipRequest): number | undefined {
  const value = header(req, "session-expires");
  const n = value === undefined ? Number.NaN : Number.parseInt(value, 10);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

/** Answers 422 with Min-SE when the request asks for a shorter interval than MIN_SE; true if it did. */
export function refuseTooSmall(tx: ServerTransaction): boolean {
  const asked = interval(tx.request);
  if (asked === undefined || asked >= MIN_SE) return false;
  tx.respond(makeResponse(tx.request, 422, { headers: [{ name: "min-se", value: String(MIN_SE) }] }));
  return true;
}

export class SessionTimer {
  readonly #clock: Clock;
  readonly #onExpiry: (intervalS: number) => void;
  #interval = 0;
  #timer?: TimerHandle;

  constructor(clock: Clock, onExpiry: (intervalS: number) => void) {
    this.#clock = clock;
    this.#onExpiry = onExpiry;
  }

  /** The headers for the 2xx answering `req`; remembers its interval (none: no timer). */
  negotiate(req: SipRequest): SipHeader[] {
    const asked = interval(req);
    if (asked === undefined || asked < MIN_SE) return [];
    this.#interval = asked;
    const out: SipHeader[] = [{ name: "session-expires", value: `${asked};refresher=uac` }];
    if ((header(req, "supported") ?? "").toLowerCase().includes("timer"))
      out.push({ name: "require", value: "timer" });
    return out;
  }

  /** (Re)starts the countdown from the last interval negotiated. */
  restart(): void {
    this.stop();
    if (this.#interval <= 0) return;
    const ms = (this.#interval - Math.min(32, this.#interval / 3)) * 1000;
    this.#timer = this.#clock.setTimeout(() => this.#onExpiry(this.#interval), ms);
  }

  stop(): void {
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
