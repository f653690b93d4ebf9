// The calls an instance has taken, in the order they started, for GET /calls: paged newest first
// with a cursor naming the last call of the previous page (its start time and id), so pages stay
// put while new calls come in. Only (start, id) pairs live here; the summaries come from the store.

export interface IndexedCall {
  startedAt: string;
  callId: string;
}

function before(a: IndexedCall, b: IndexedCall): boolean {
  return a.startedAt < b.startedAt || (a.startedAt === b.startedAt && a.callId < b.callId);
}

export class CallIndex {
  /** Oldest first. */
  readonly #calls: IndexedCall[] = [];
  readonly #ids = new Set<string>();

  get size(): number {
    return this.#calls.length;
  }

  /** Adds a call (once per id; a call id seen again keeps its first start). */
  add(call: IndexedCall): void {
    if (this.#ids.has(call.callId)) return;
    this.#ids.add(call.callId);
    const at = this.#firstNotBefore(call);
    this.#calls.splice(at, 0, { startedAt: call.startedAt, callId: call.callId });
  }

  remove(callId: string): void {
    if (!this.#ids.delete(callId)) return;
    this.#calls.splice(
      this.#calls.findIndex((c) => c.callId === callId),
      1,
    );
  }

  /** Up to `limit` calls, newest first, older than `after` when given; `next` when more are left. */
  page(limit: number, after?: IndexedCall): { calls: IndexedCall[]; next?: IndexedCall } {
    const end = after ? this.#firstNotBefore(after) : this.#calls.length;
    const calls = this.#calls.slice(Math.max(0, end - limit), end).reverse();
    const more = end - limit > 0;
    return more ? { calls, next: calls[calls.length - 1]! } : { calls };
  }

  /** Where `call` goes in the order: the first position whose call is not before it. */
  #firstNotBefore(call: IndexedCall): number {
    let lo = 0;
    let hi = this.#calls.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const c = this.#calls[mid]!;
      if (before(c, call)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** A page cursor as clients see it: opaque (base64url of the last call's start and id). */
export function encodeCursor(call: IndexedCall): string {
  return Buffer.from(JSON.stringify([call.startedAt, call.callId])).toString("base64url");
}

/** The call a cursor names; undefined when it is not one encodeCursor made. */
export function decodeCursor(cursor: string): IndexedCall | undefined {
  try {
    const v = JSON.parse(Buffer.from(cursor, "base64url").toString()) as unknown;
    if (!Array.isArray(v) || v.length !== 2) return undefined;
    const [startedAt, callId] = v as unknown[];
    if (typeof startedAt !== "string" || typeof callId !== "string") return undefined;
    if (Number.isNaN(Date.parse(startedAt))) return undefined;
    return { startedAt, callId };
  } catch {
    return undefined;
  }
}
