// Other bridges' call events, heard by LISTEN on a connection of its own (reconnected with
// backoff when it drops): what a console needs to show every bridge's live calls.
import pg from "pg";
import type { Logger } from "../../../core/log.ts";
import type { CallEvent } from "../../call-record.ts";
import { eventOfNow, type StoredEvent } from "../../legacy-events.ts";
import { type Announcement, CHANNEL } from "./write-batch.ts";

export interface RemoteEvent {
  instance: string;
  callId: string;
  event: CallEvent;
}

export class RemoteListener {
  readonly #url: string;
  readonly #instance: string;
  readonly #pool: pg.Pool;
  readonly #log: Logger;
  readonly #maxBackoffMs: number;
  readonly #watchers = new Set<(e: RemoteEvent) => void>();
  #client: pg.Client | undefined;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;
  #backoff = 250;

  constructor(url: string, instance: string, pool: pg.Pool, log: Logger, maxBackoffMs: number) {
    this.#url = url;
    this.#instance = instance;
    this.#pool = pool;
    this.#log = log;
    this.#maxBackoffMs = maxBackoffMs;
  }

  watch(listener: (e: RemoteEvent) => void): () => void {
    this.#watchers.add(listener);
    return () => this.#watchers.delete(listener);
  }

  start(): void {
    void this.#connect();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#client?.end().catch(() => {});
  }

  async #connect(): Promise<void> {
    if (this.#stopped) return;
    const client = new pg.Client({ connectionString: this.#url });
    this.#client = client;
    const lost = (err?: Error) => {
      if (this.#client !== client) return;
      this.#client = undefined;
      client.end().catch(() => {});
      if (this.#stopped) return;
      if (err)
        this.#log.warn(
          { err: err.message },
          "call records: lost the feed of other bridges' calls; reconnecting",
        );
      this.#timer = setTimeout(() => void this.#connect(), this.#backoff);
      this.#backoff = Math.min(this.#maxBackoffMs, this.#backoff * 2);
    };
    client.on("error", lost);
    client.on("end", () => lost());
    client.on("notification", (n) => void this.#heard(n.payload));
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}`);
      this.#backoff = 250;
    } catch (err) {
      lost(err as Error);
    }
  }

  async #heard(payload: string | undefined): Promise<void> {
    if (!payload || this.#watchers.size === 0) return;
    let a: Announcement;
    try {
      a = JSON.parse(payload) as Announcement;
    } catch {
      return;
    }
    if (a.instance === this.#instance) return;
    // A bridge of an older version (a rolling upgrade) announces its events as it wrote them.
    let event: StoredEvent | undefined;
    if ("event" in a) event = a.event;
    else {
      const r = await this.#pool
        .query<{ body: StoredEvent }>("SELECT body FROM events WHERE call_id = $1 AND seq = $2", [
          a.callId,
          a.seq,
        ])
        .catch(() => undefined);
      event = r?.rows[0]?.body;
    }
    if (!event) return;
    const now = eventOfNow(event);
    for (const w of this.#watchers) w({ instance: a.instance, callId: a.callId, event: now });
  }
}
