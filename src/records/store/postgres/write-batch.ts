// One batch of call events written in one PostgreSQL transaction, the rows as in SQLite
// (event-rows.ts); each event is also announced (NOTIFY) to the other bridges on the database,
// delivered when the transaction commits, so their consoles show this bridge's live calls.
import type { PoolClient } from "pg";
import type { CallEvent } from "../../call-record.ts";
import {
  dialColumns,
  endColumns,
  iso,
  startValues,
  TURN_COLUMNS,
  turnRowOf,
  turnWords,
} from "../event-rows.ts";

export const CHANNEL = "voice_bridge_events";
/** NOTIFY payloads are limited to 8000 bytes: a bigger event is announced by reference. */
const MAX_PAYLOAD = 7000;

export interface Write {
  callId: string;
  event: CallEvent;
}

/** What other bridges hear: the event itself, or where to read it. */
export type Announcement =
  | { instance: string; callId: string; event: CallEvent }
  | { instance: string; callId: string; seq: number };

const TURN_INSERT = `INSERT INTO turns (call_id, seq, ${TURN_COLUMNS.join(", ")}, words)
  VALUES ($1, $2, ${TURN_COLUMNS.map((_, i) => `$${i + 3}`).join(", ")}, to_tsvector('simple', $${TURN_COLUMNS.length + 3}))
  ON CONFLICT (call_id, seq) DO NOTHING`;

/**
 * Writes `writes` in order inside the caller's transaction. `nextSeq` numbers each call's events
 * (read from the table for a call not seen yet); the caller keeps the numbers only on commit.
 */
export async function writeBatch(
  client: PoolClient,
  instance: string,
  writes: Write[],
  nextSeq: Map<string, number>,
): Promise<void> {
  for (const { callId, event } of writes) {
    if (event.type === "call-end" && event.outcome === "instance_lost") {
      // Another bridge may have noticed the same lost call first: one end per call.
      const r = await client.query("SELECT 1 FROM calls WHERE call_id = $1 AND ended_at IS NULL FOR UPDATE", [
        callId,
      ]);
      if (!r.rowCount) continue;
    }
    let seq = nextSeq.get(callId);
    if (seq === undefined) {
      const r = await client.query<{ seq: number | null }>(
        "SELECT max(seq) AS seq FROM events WHERE call_id = $1",
        [callId],
      );
      seq = (r.rows[0]?.seq ?? -1) + 1;
    }
    nextSeq.set(callId, seq + 1);
    await client.query("INSERT INTO events (call_id, seq, type, at, body) VALUES ($1, $2, $3, $4, $5)", [
      callId,
      seq,
      event.type,
      iso(event.at),
      JSON.stringify(event),
    ]);
    if (event.type === "call-start") {
      await client.query(
        `INSERT INTO calls (call_id, instance, transport, from_number, to_number, agent, started_at, direction)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (call_id) DO NOTHING`,
        [...startValues(callId, instance, event)],
      );
    } else if (event.type === "dial") {
      const d = dialColumns(event);
      await client.query(
        "UPDATE calls SET dial_outcome = $1, dial_reason = $2, amd = $3 WHERE call_id = $4",
        [d.dial_outcome, d.dial_reason, d.amd, callId],
      );
    } else if (event.type === "call-end") {
      const e = endColumns(event);
      await client.query(
        "UPDATE calls SET ended_at = $1, end_reason = $2, outcome = $3, duration_ms = $4 WHERE call_id = $5 AND ended_at IS NULL",
        [e.ended_at, e.end_reason, e.outcome, e.duration_ms, callId],
      );
    } else {
      const turn = turnRowOf(event);
      if (turn) {
        const words = turnWords(event) ?? "";
        await client.query(TURN_INSERT, [callId, seq, ...TURN_COLUMNS.map((c) => turn[c]), words]);
        // The call's words for search (migration 0002), and its turn count.
        await client.query(
          "UPDATE calls SET turns = turns + 1, words = words || to_tsvector('simple', $2) WHERE call_id = $1",
          [callId, words],
        );
      }
    }
    const whole = JSON.stringify({ instance, callId, event } satisfies Announcement);
    const payload =
      Buffer.byteLength(whole) <= MAX_PAYLOAD ? whole : JSON.stringify({ instance, callId, seq });
    await client.query("SELECT pg_notify($1, $2)", [CHANNEL, payload]);
  }
}
