// Who may talk to the bridge, decided per request before the stack keeps anything for it: the
// allow-list of source ranges (plus the registrars we registered with), a per-source token bucket
// for requests outside calls (a scanner's flood is dropped, not answered), and log lines about a
// refused source at most once a minute each, so a scanner cannot fill the log either.
import { BlockList, isIPv4, isIPv6 } from "node:net";
import type { Logger } from "../../src/core/log.ts";

export type RefusalReason = "not_allowed" | "rate_limited" | "unauthenticated" | "bad_credentials";
export const REFUSAL_REASONS: readonly RefusalReason[] = [
  "not_allowed",
  "rate_limited",
  "unauthenticated",
  "bad_credentials",
];

export interface SourcePolicyOptions {
  /** CIDR ranges or addresses; `any` anywhere opens the list. */
  readonly allowFrom: readonly string[];
  /** Requests per second per source outside calls; 0: unlimited. The bucket holds 4 s worth. */
  readonly rateLimit: number;
  readonly now: () => number;
  readonly log: Logger;
}

/** Sources remembered at most by the rate and log tables (oldest dropped first). */
const MAX_SOURCES = 20_000;
const LOG_EVERY_MS = 60_000;
const BURST_SECONDS = 4;

interface Bucket {
  tokens: number;
  at: number;
}

export class SourcePolicy {
  readonly refused: Record<RefusalReason, number> = {
    not_allowed: 0,
    rate_limited: 0,
    unauthenticated: 0,
    bad_credentials: 0,
  };
  readonly #any: boolean;
  readonly #list = new BlockList();
  readonly #trusted = new Set<string>();
  readonly #rate: number;
  readonly #now: () => number;
  readonly #log: Logger;
  readonly #buckets = new Map<string, Bucket>();
  readonly #logged = new Map<string, number>();

  constructor(o: SourcePolicyOptions) {
    this.#any = o.allowFrom.some((e) => e.toLowerCase() === "any");
    for (const entry of o.allowFrom) {
      if (entry.toLowerCase() === "any") continue;
      const [ip, prefix] = entry.split("/") as [string, string | undefined];
      const type = isIPv4(ip) ? "ipv4" : "ipv6";
      if (prefix === undefined) this.#list.addAddress(ip, type);
      else this.#list.addSubnet(ip, Number(prefix), type);
    }
    this.#rate = o.rateLimit;
    this.#now = o.now;
    this.#log = o.log;
  }

  /** Addresses allowed whatever the list says (the registrars and proxies we register with). */
  trust(address: string): void {
    this.#trusted.add(plain(address));
  }

  allowed(address: string): boolean {
    if (this.#any) return true;
    const a = plain(address);
    if (this.#trusted.has(a)) return true;
    if (isIPv4(a)) return this.#list.check(a, "ipv4");
    return isIPv6(a) && this.#list.check(a, "ipv6");
  }

  /** Takes one token of `address`'s bucket for a request outside calls; false: over the rate, drop it. */
  admit(address: string): boolean {
    if (this.#rate <= 0) return true;
    const now = this.#now();
    const burst = this.#rate * BURST_SECONDS;
    let b = this.#buckets.get(address);
    if (b) {
      b.tokens = Math.min(burst, b.tokens + ((now - b.at) / 1000) * this.#rate);
      b.at = now;
      this.#buckets.delete(address); // re-inserted last: the map's order is least recently seen first
    } else b = { tokens: burst, at: now };
    this.#buckets.set(address, b);
    trim(this.#buckets);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }

  /** Counts a refusal and logs it, once a minute per source and reason at most. */
  refuse(reason: RefusalReason, address: string, detail: Record<string, unknown>): void {
    this.refused[reason]++;
    // Every authenticated call is challenged first: counted, not worth a log line.
    if (reason === "unauthenticated") return;
    const key = `${reason}|${address}`;
    const now = this.#now();
    const last = this.#logged.get(key);
    if (last !== undefined && now - last < LOG_EVERY_MS) return;
    this.#logged.delete(key);
    this.#logged.set(key, now);
    trim(this.#logged);
    this.#log.warn(
      { from: address, reason, ...detail },
      `sip: ${MESSAGES[reason]} (logged once a minute per source)`,
    );
  }
}

const MESSAGES: Record<RefusalReason, string> = {
  not_allowed: "request from a source outside sip.allowFrom (SIP_ALLOW_FROM), answered 403",
  rate_limited: "requests over the per-source rate limit (sip.rateLimit), dropped",
  unauthenticated: "INVITE without valid credentials, challenged",
  bad_credentials: "INVITE with wrong digest credentials, answered 403",
};

/** IPv4-mapped IPv6 (a dual-stack socket's view of an IPv4 peer) as plain IPv4. */
function plain(address: string): string {
  return address.startsWith("::ffff:") && isIPv4(address.slice(7)) ? address.slice(7) : address;
}

function trim<V>(map: Map<string, V>): void {
  while (map.size > MAX_SOURCES) {
    const oldest = map.keys().next().value;
    if (oldest === undefined) return;
    map.delete(oldest);
  }
}
