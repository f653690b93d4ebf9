// Cloned voices (E10): one row per voice in SQLite, keyed by account, holding the source file id,
// the creation time and the engine parameters derived from the sample. Pages are ordered by
// (created_at, seq): seq is the insertion counter, so voices created in the same second still have
// one fixed order and a cursor never skips or repeats one.
import { randomBytes } from "node:crypto";
import type { SampleAnalysis } from "../engines/tts/clone/derive.ts";
import type { EngineVoice } from "../engines/tts/voices.ts";
import type { Database } from "./db.ts";

export const VOICE_ID_PATTERN = /^voice-[0-9a-f]{24}$/;

/** What the sample analysis measured (kept to reuse for more voices from the same file). */
export type VoiceSample = SampleAnalysis;

export interface StoredVoice {
  id: string;
  account: string;
  fileId: string;
  createdAt: number;
  voice: EngineVoice;
  sample: VoiceSample;
}

export interface VoicePageQuery {
  limit: number;
  order: "asc" | "desc";
  /** Voice ids (already checked to exist with cursorKey). */
  before?: string | undefined;
  after?: string | undefined;
}

export interface VoicePage {
  voices: StoredVoice[];
  hasMore: boolean;
}

interface Row {
  seq: number;
  id: string;
  account: string;
  file_id: string;
  created_at: number;
  voice: string;
  sample: string;
}

export class VoiceStore {
  private readonly db: Database;

  constructor(db: Database) {
    this.db = db;
    db.exec(`CREATE TABLE IF NOT EXISTS voices (
      seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, account TEXT NOT NULL,
      file_id TEXT NOT NULL, created_at INTEGER NOT NULL, voice TEXT NOT NULL, sample TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS voices_account ON voices (account, created_at, seq);`);
  }

  create(
    account: string,
    fileId: string,
    voice: EngineVoice,
    sample: VoiceSample,
    now = Date.now(),
  ): StoredVoice {
    const v: StoredVoice = {
      id: `voice-${randomBytes(12).toString("hex")}`,
      account,
      fileId,
      createdAt: Math.floor(now / 1000),
      voice,
      sample,
    };
    this.db
      .prepare("INSERT INTO voices (id, account, file_id, created_at, voice, sample) VALUES (?,?,?,?,?,?)")
      .run(v.id, account, fileId, v.createdAt, JSON.stringify(voice), JSON.stringify(sample));
    return v;
  }

  /** The caller's voice, or undefined (also for ids that are not well-formed). */
  get(account: string, id: string): StoredVoice | undefined {
    const row = this.row(account, id);
    return row ? fromRow(row) : undefined;
  }

  /** The newest voice already cloned from this file, whose analysis can be reused. */
  fromFile(account: string, fileId: string): StoredVoice | undefined {
    const row = this.db
      .prepare("SELECT * FROM voices WHERE account = ? AND file_id = ? ORDER BY seq DESC LIMIT 1")
      .get(account, fileId) as Row | undefined;
    return row ? fromRow(row) : undefined;
  }

  /**
   * One page in list order. `after` keeps what follows the cursor in that order, `before` what
   * precedes it; with both, what lies between. The page starts at `after` (or the list's start),
   * except with `before` alone, where it is the `limit` voices just before the cursor, so that
   * paging backward with the first id of each page walks the list without gaps.
   */
  page(account: string, q: VoicePageQuery): VoicePage {
    const where = ["account = ?"];
    const args: Array<string | number> = [account];
    // In list order, "later" means a greater key for asc and a smaller one for desc.
    const later = q.order === "asc" ? ">" : "<";
    const earlier = q.order === "asc" ? "<" : ">";
    for (const [cursor, op] of [
      [q.after, later],
      [q.before, earlier],
    ] as const) {
      if (cursor === undefined) continue;
      const row = this.row(account, cursor);
      if (!row) throw new Error(`unknown cursor ${cursor}`);
      where.push(`(created_at, seq) ${op} (?, ?)`);
      args.push(row.created_at, row.seq);
    }
    const backward = q.before !== undefined && q.after === undefined;
    const forwardDir = q.order === "asc" ? "ASC" : "DESC";
    const dir = backward ? (forwardDir === "ASC" ? "DESC" : "ASC") : forwardDir;
    const rows = this.db
      .prepare(
        `SELECT * FROM voices WHERE ${where.join(" AND ")} ORDER BY created_at ${dir}, seq ${dir} LIMIT ?`,
      )
      .all(...args, q.limit + 1) as unknown as Row[];
    const hasMore = rows.length > q.limit;
    const page = rows.slice(0, q.limit);
    if (backward) page.reverse();
    return { voices: page.map(fromRow), hasMore };
  }

  private row(account: string, id: string): Row | undefined {
    if (!VOICE_ID_PATTERN.test(id)) return undefined;
    return this.db.prepare("SELECT * FROM voices WHERE account = ? AND id = ?").get(account, id) as
      | Row
      | undefined;
  }
}

function fromRow(r: Row): StoredVoice {
  return {
    id: r.id,
    account: r.account,
    fileId: r.file_id,
    createdAt: r.created_at,
    voice: JSON.parse(r.voice) as EngineVoice,
    sample: JSON.parse(r.sample) as VoiceSample,
  };
}
