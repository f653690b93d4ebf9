// Many bridges on one database: each says it is alive every few seconds; a bridge that stopped
// saying so (killed, its machine gone) has its live calls ended with reason `instance lost` by
// the next bridge that notices, so no call stays live forever. At start, a bridge also ends the
// calls its own previous run left live. Two bridges noticing at once write one end (write-batch.ts).
// A bridge judges the others only once it has itself been in touch with the database for a whole
// `lostAfterMs`: after an outage every bridge's last beat is old, and the first bridge back must not
// end the live calls of the others before they have had the time to beat again.
import type pg from "pg";
import type { Logger } from "../../../core/log.ts";
import { lostEnd } from "../event-rows.ts";
import type { Write } from "./write-batch.ts";

export interface InstanceWatchOptions {
  instance: string;
  log: Logger;
  heartbeatMs: number;
  lostAfterMs: number;
}

export class InstanceWatch {
  readonly #pool: pg.Pool;
  readonly #o: InstanceWatchOptions;
  /** Writes the call-end events (through the store's queue: in order, announced, retried). */
  readonly #end: (writes: Write[]) => void;
  #timer: NodeJS.Timeout | undefined;
  #first = true;
  #stopped = false;
  /** Since when this bridge's beats have reached the database without a break (undefined: not now). */
  #inTouchSince: number | undefined;
  /** Calls already ended by this bridge (the end may still be queued). */
  readonly #ended = new Set<string>();

  constructor(pool: pg.Pool, o: InstanceWatchOptions, end: (writes: Write[]) => void) {
    this.#pool = pool;
    this.#o = o;
    this.#end = end;
  }

  /** Resolves after the first beat (this run's leftovers found), whether or not the database answered. */
  start(): Promise<void> {
    return this.#beat();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
  }

  async #beat(): Promise<void> {
    try {
      await this.#pool.query(
        "INSERT INTO instances (instance, seen_at) VALUES ($1, now()) ON CONFLICT (instance) DO UPDATE SET seen_at = now()",
        [this.#o.instance],
      );
      this.#inTouchSince ??= Date.now();
      const judgeOthers = Date.now() - this.#inTouchSince >= this.#o.lostAfterMs;
      const lost = await this.#pool.query<{ call_id: string; started_at: string; instance: string }>(
        `SELECT c.call_id, c.started_at, c.instance FROM calls c LEFT JOIN instances i ON i.instance = c.instance
         WHERE c.ended_at IS NULL AND (
           (c.instance = $1 AND $2::boolean)
           OR (c.instance <> $1 AND $4::boolean
               AND (i.seen_at IS NULL OR i.seen_at < now() - make_interval(secs => $3::double precision / 1000))))`,
        [this.#o.instance, this.#first, this.#o.lostAfterMs, judgeOthers],
      );
      this.#first = false;
      const fresh = lost.rows.filter((r) => !this.#ended.has(r.call_id));
      if (fresh.length) {
        const now = new Date();
        for (const r of fresh) this.#ended.add(r.call_id);
        this.#o.log.warn(
          { calls: fresh.length, instances: [...new Set(fresh.map((r) => r.instance))] },
          "call records: calls of a bridge that stopped (killed or gone) are ended as `instance lost`",
        );
        this.#end(fresh.map((r) => ({ callId: r.call_id, event: lostEnd(r.started_at, now) })));
      }
    } catch {
      // The database is down: the store says so; the next beat tries again.
      this.#inTouchSince = undefined;
    }
    if (!this.#stopped) this.#timer = setTimeout(() => void this.#beat(), this.#o.heartbeatMs);
  }
}
