// Stored calls for `npm run bench -- store`: N ended calls of four turns each, spread over the
// last months, from 10,000 numbers, their words drawn from a 600-word vocabulary, written straight
// into the tables (the seeding is set-up, not what is measured: writes through the store are
// measured by turn_writes_per_s).
import { DatabaseSync } from "node:sqlite";
import type pg from "pg";

const WORDS = Array.from({ length: 600 }, (_, i) => `w${i.toString(36)}x`);
/** Words every search in the benchmark looks for: some common, some rare. */
export function searchTerms(): string[][] {
  return [["w1x"], ["w2sx"], ["w3x", "w4x"], ["wgjx"], ["w10x", "w1ax"], ["wzzx"]];
}

interface SeedCall {
  id: string;
  transport: string;
  from: string;
  startedAt: string;
  endedAt: string;
  turns: { role: string; text: string; at: string }[];
}

function* calls(n: number): Generator<SeedCall> {
  const t0 = Date.UTC(2026, 0, 1);
  // mulberry32: every word equally likely, the same calls on every run.
  let x = 12345;
  const rand = () => {
    x = (x + 0x6d2b79f5) | 0;
    let t = Math.imul(x ^ (x >>> 15), 1 | x);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (t ^ (t >>> 14)) >>> 0;
  };
  for (let i = 0; i < n; i++) {
    const start = t0 + i * 26_000;
    const turns = [0, 1, 2, 3].map((t) => ({
      role: t % 2 ? "assistant" : "user",
      text: Array.from({ length: 8 }, () => WORDS[rand() % WORDS.length]).join(" "),
      at: new Date(start + t * 10_000).toISOString(),
    }));
    yield {
      id: `seed-${String(i).padStart(7, "0")}`,
      transport: ["twilio", "sip", "audiosocket", "browser"][i % 4]!,
      from: `+1555${String(i % 10_000).padStart(7, "0")}`,
      startedAt: new Date(start).toISOString(),
      endedAt: new Date(start + 60_000).toISOString(),
      turns,
    };
  }
}

export function seedSqlite(path: string, n: number): void {
  const db = new DatabaseSync(path);
  db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF; BEGIN");
  const call = db.prepare(
    `INSERT INTO calls (call_id, instance, transport, from_number, to_number, started_at, ended_at, end_reason, outcome, duration_ms, turns)
     VALUES (?, 'bench', ?, ?, '+15559990000', ?, ?, 'caller hung up', 'caller_hangup', 60000, 4)`,
  );
  const turn = db.prepare("INSERT INTO turns (call_id, seq, role, at, text) VALUES (?, ?, ?, ?, ?)");
  const words = db.prepare("INSERT INTO turn_words (call_id, text) VALUES (?, ?)");
  for (const c of calls(n)) {
    call.run(c.id, c.transport, c.from, c.startedAt, c.endedAt);
    c.turns.forEach((t, k) => {
      turn.run(c.id, k + 1, t.role, t.at, t.text);
      words.run(c.id, t.text);
    });
  }
  db.exec("COMMIT; PRAGMA optimize");
  db.close();
}

export async function seedPostgres(pool: pg.Pool, n: number): Promise<void> {
  const CHUNK = 5000;
  let batch: SeedCall[] = [];
  const flush = async () => {
    await pool.query(
      `INSERT INTO calls (call_id, instance, transport, from_number, to_number, started_at, ended_at, end_reason, outcome, duration_ms, turns)
       SELECT id, 'bench', tr, fr, '+15559990000', st, en, 'caller hung up', 'caller_hangup', 60000, 4
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS u(id, tr, fr, st, en)`,
      [
        batch.map((c) => c.id),
        batch.map((c) => c.transport),
        batch.map((c) => c.from),
        batch.map((c) => c.startedAt),
        batch.map((c) => c.endedAt),
      ],
    );
    const turns = batch.flatMap((c) => c.turns.map((t, k) => ({ id: c.id, seq: k + 1, ...t })));
    await pool.query(
      `INSERT INTO turns (call_id, seq, role, at, text, words)
       SELECT id, seq, role, at, text, to_tsvector('simple', text)
       FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[]) AS u(id, seq, role, at, text)`,
      [
        turns.map((t) => t.id),
        turns.map((t) => t.seq),
        turns.map((t) => t.role),
        turns.map((t) => t.at),
        turns.map((t) => t.text),
      ],
    );
    await pool.query(
      `UPDATE calls c SET words = to_tsvector('simple', u.text)
       FROM unnest($1::text[], $2::text[]) AS u(id, text) WHERE c.call_id = u.id`,
      [batch.map((c) => c.id), batch.map((c) => c.turns.map((t) => t.text).join(" "))],
    );
    batch = [];
  };
  for (const c of calls(n)) {
    batch.push(c);
    if (batch.length === CHUNK) await flush();
  }
  if (batch.length) await flush();
  await pool.query("ANALYZE calls; ANALYZE turns");
}
