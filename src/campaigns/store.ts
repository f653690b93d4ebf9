// Campaigns in the store: each campaign, each row's status, attempts, next attempt and last
// outcome, and every attempt with the call it placed. How rows are taken for dialling, their
// attempts written and their leases kept is store-dialing.ts; this is the rest (create, read,
// change, results), and the one object the scheduler and the control hold.
import type {
  AttemptOutcome,
  Campaign,
  CampaignCall,
  CampaignCounts,
  CampaignRowInput,
  CampaignSettings,
  CampaignStatus,
  CampaignView,
  RowStatus,
} from "./campaign.ts";
import { marks, type Sql, type SqlEngine, type SqlRow } from "./sql.ts";
import {
  type CampaignWrite,
  type ClaimedRow,
  type ClaimRequest,
  type ClaimResult,
  DIALING,
  type DialingArgs,
  type DialingOp,
  type DialingResult,
  type WorkResult,
} from "./store-dialing.ts";

export type { CampaignWrite, ClaimedRow, ClaimRequest, ClaimResult, WorkResult };

/** One line of the results: a callee, how it went, its attempts' calls. */
export interface ResultRow {
  readonly number: string;
  readonly timeZone?: string;
  readonly variables: Record<string, string>;
  readonly status: RowStatus;
  readonly outcome?: AttemptOutcome;
  readonly reason?: string;
  readonly attempts: number;
  readonly callIds: string[];
  readonly lastAttemptAt?: string;
  /** The last attempt's post-call analysis (summary and fields), when there was one. */
  readonly analysis?: { summary?: string; fields?: Record<string, unknown> };
}

const num = (v: unknown) => Number(v ?? 0);
const BATCH = 200;

export class CampaignStore {
  readonly #db: SqlEngine;
  readonly #lock: string;

  constructor(db: SqlEngine) {
    this.#db = db;
    this.#lock = db.locks ? " FOR UPDATE" : "";
  }

  get engine(): string {
    return this.#db.engine;
  }

  /** The campaign and all its rows, in one transaction: created whole or not at all. */
  async create(c: Campaign, rows: readonly CampaignRowInput[], now: number): Promise<void> {
    await this.#db.tx(async (q) => {
      await q.all(
        "INSERT INTO campaigns (campaign_id, name, status, settings, created_at, tokens, tokens_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [c.id, c.name, c.status, JSON.stringify(c.settings), c.createdAt, 1, now],
      );
      await this.#insertRows(q, c.id, c.settings, rows, 0, now);
    });
  }

  async #insertRows(
    q: Sql,
    id: string,
    settings: CampaignSettings,
    rows: readonly CampaignRowInput[],
    first: number,
    now: number,
  ): Promise<void> {
    const due = settings.startAt ? Math.max(now, Date.parse(settings.startAt)) : now;
    for (let i = 0; i < rows.length; i += BATCH) {
      const batch = rows.slice(i, i + BATCH);
      await q.all(
        `INSERT INTO campaign_rows (campaign_id, row_no, number, time_zone, variables, line, status, attempts, next_at, updated_at) VALUES ${batch.map(() => `(${marks(10)})`).join(", ")}`,
        batch.flatMap((r, j) => [
          id,
          first + i + j + 1,
          r.number,
          r.timeZone ?? null,
          JSON.stringify(r.variables),
          r.line,
          "pending",
          0,
          due,
          now,
        ]),
      );
    }
  }

  /** Adds rows to a campaign (numbers it has are left to the caller to refuse: `numbers`). */
  async addRows(id: string, rows: readonly CampaignRowInput[], now: number): Promise<boolean> {
    return this.#db.tx(async (q) => {
      const c = (
        await q.all(`SELECT settings, status FROM campaigns WHERE campaign_id = ?${this.#lock}`, [id])
      )[0];
      if (!c) return false;
      const last = num(
        (await q.all("SELECT max(row_no) AS n FROM campaign_rows WHERE campaign_id = ?", [id]))[0]?.n,
      );
      await this.#insertRows(q, id, JSON.parse(String(c.settings)) as CampaignSettings, rows, last, now);
      if (c.status === "completed" && rows.length > 0)
        await q.all("UPDATE campaigns SET status = 'running' WHERE campaign_id = ?", [id]);
      return true;
    });
  }

  async numbers(id: string): Promise<string[]> {
    return (await this.#db.all("SELECT number FROM campaign_rows WHERE campaign_id = ?", [id])).map((r) =>
      String(r.number),
    );
  }

  async get(id: string): Promise<CampaignView | undefined> {
    const row = (await this.#db.all("SELECT * FROM campaigns WHERE campaign_id = ?", [id]))[0];
    return row ? { ...campaignOf(row), counts: await this.counts(id) } : undefined;
  }

  async list(): Promise<CampaignView[]> {
    const rows = await this.#db.all("SELECT * FROM campaigns ORDER BY created_at DESC, campaign_id");
    return Promise.all(
      rows.map(async (r) => ({ ...campaignOf(r), counts: await this.counts(String(r.campaign_id)) })),
    );
  }

  async counts(id: string): Promise<CampaignCounts> {
    const groups = await this.#db.all(
      "SELECT status, outcome, count(*) AS n, sum(attempts) AS a FROM campaign_rows WHERE campaign_id = ? GROUP BY status, outcome",
      [id],
    );
    const byStatus: Partial<Record<RowStatus, number>> = {};
    const byOutcome: Partial<Record<AttemptOutcome, number>> = {};
    let rows = 0;
    let attempts = 0;
    for (const g of groups) {
      const n = num(g.n);
      rows += n;
      attempts += num(g.a);
      const s = String(g.status) as RowStatus;
      byStatus[s] = (byStatus[s] ?? 0) + n;
      if (g.outcome) {
        const o = String(g.outcome) as AttemptOutcome;
        byOutcome[o] = (byOutcome[o] ?? 0) + n;
      }
    }
    return { rows, byStatus, byOutcome, attempts };
  }

  /** The campaign's latest attempts, newest first (the console's list of its calls). */
  async calls(id: string, limit: number): Promise<CampaignCall[]> {
    const rows = await this.#db.all(
      "SELECT a.row_no, r.number, a.attempt, a.call_id, a.instance, a.started_at, a.ended_at, a.outcome FROM campaign_attempts a JOIN campaign_rows r ON r.campaign_id = a.campaign_id AND r.row_no = a.row_no WHERE a.campaign_id = ? ORDER BY a.started_at DESC, a.row_no DESC, a.attempt DESC LIMIT ?",
      [id, limit],
    );
    return rows.map((a) => ({
      ...(a.call_id ? { callId: String(a.call_id) } : {}),
      number: String(a.number),
      row: num(a.row_no),
      attempt: num(a.attempt),
      instance: String(a.instance),
      startedAt: new Date(num(a.started_at)).toISOString(),
      ...(a.ended_at !== null && a.ended_at !== undefined
        ? { endedAt: new Date(num(a.ended_at)).toISOString() }
        : {}),
      ...(a.outcome ? { outcome: String(a.outcome) as AttemptOutcome } : {}),
    }));
  }

  /** Rows by status of every campaign running or paused, in one query (the metrics' gauge). */
  async activeRows(): Promise<{ campaignId: string; status: RowStatus; rows: number }[]> {
    return (
      await this.#db.all(
        "SELECT r.campaign_id, r.status, count(*) AS n FROM campaign_rows r JOIN campaigns c ON c.campaign_id = r.campaign_id WHERE c.status IN ('running', 'paused') GROUP BY r.campaign_id, r.status",
      )
    ).map((r) => ({
      campaignId: String(r.campaign_id),
      status: String(r.status) as RowStatus,
      rows: num(r.n),
    }));
  }

  /** The campaigns bridges should work on now. */
  async running(): Promise<Campaign[]> {
    return (await this.#db.all("SELECT * FROM campaigns WHERE status = 'running'")).map(campaignOf);
  }

  /** The zones of the rows still to call (for calling hours on the callee's clock). */
  async zones(id: string): Promise<string[]> {
    return (
      await this.#db.all(
        "SELECT DISTINCT time_zone FROM campaign_rows WHERE campaign_id = ? AND status = 'pending' AND time_zone IS NOT NULL",
        [id],
      )
    ).map((r) => String(r.time_zone));
  }

  /** Pause, resume or cancel; cancelling also cancels the rows not yet done. False: no such campaign or not allowed. */
  async setStatus(
    id: string,
    to: CampaignStatus,
    now: number,
    reason?: string,
  ): Promise<Campaign | undefined> {
    return this.#db.tx(async (q) => {
      const row = (await q.all(`SELECT * FROM campaigns WHERE campaign_id = ?${this.#lock}`, [id]))[0];
      if (!row) return undefined;
      const from = String(row.status) as CampaignStatus;
      const allowed =
        (to === "paused" && from === "running") ||
        (to === "running" && from === "paused") ||
        (to === "canceled" && (from === "running" || from === "paused"));
      if (!allowed) return campaignOf(row);
      await q.all("UPDATE campaigns SET status = ?, paused_reason = ? WHERE campaign_id = ?", [
        to,
        reason ?? null,
        id,
      ]);
      if (to === "canceled")
        await q.all(
          "UPDATE campaign_rows SET status = 'canceled', outcome = COALESCE(outcome, 'canceled'), updated_at = ? WHERE campaign_id = ? AND status = 'pending'",
          [now, id],
        );
      // A resumed campaign starts with one call's worth of pace, not what piled up while it was paused.
      if (to === "running")
        await q.all("UPDATE campaigns SET tokens = 1, tokens_at = ? WHERE campaign_id = ?", [now, id]);
      return { ...campaignOf(row), status: to, ...(reason ? { pausedReason: reason } : {}) };
    });
  }

  /** New settings (pace, concurrency, hours, end) for a campaign, taken by every bridge at its next claim. */
  async updateSettings(id: string, change: Partial<CampaignSettings>): Promise<Campaign | undefined> {
    return this.#db.tx(async (q) => {
      const row = (await q.all(`SELECT * FROM campaigns WHERE campaign_id = ?${this.#lock}`, [id]))[0];
      if (!row) return undefined;
      const c = campaignOf(row);
      const settings = { ...c.settings, ...change };
      await q.all("UPDATE campaigns SET settings = ? WHERE campaign_id = ?", [JSON.stringify(settings), id]);
      return { ...c, settings };
    });
  }

  /** A dialling operation, beside the database when its engine can (SQLite's thread). */
  #dialing<K extends DialingOp>(op: K, ...args: DialingArgs<K>): Promise<DialingResult<K>> {
    if (this.#db.near) return this.#db.near(op, ...args);
    const run = DIALING[op] as unknown as (db: SqlEngine, ...a: DialingArgs<K>) => Promise<DialingResult<K>>;
    return run(this.#db, ...args);
  }

  /** Takes the rows this bridge may dial now (store-dialing.ts). */
  claim(r: ClaimRequest): Promise<ClaimResult> {
    return this.#dialing("claim", r);
  }

  /** A scheduler's wake: its writes, then its claims (store-dialing.ts `work`). */
  work(
    instance: string,
    writes: readonly CampaignWrite[],
    claims: readonly ClaimRequest[],
  ): Promise<WorkResult> {
    return this.#dialing("work", instance, writes, claims);
  }

  /** The calls placed and ended since the last batch, in one transaction; whether each still applied. */
  apply(instance: string, writes: readonly CampaignWrite[]): Promise<boolean[]> {
    return this.#dialing("apply", instance, writes);
  }

  /** One attempt's end (a batch of one): false when the attempt is no longer the row's. */
  async finish(
    instance: string,
    row: ClaimedRow,
    outcome: AttemptOutcome,
    reason: string,
    at: number,
  ): Promise<boolean> {
    const [applied] = await this.apply(instance, [{ kind: "finish", row, outcome, reason, at }]);
    return applied === true;
  }

  /** The campaign's end (endAt) has come: rows not called again are done, the campaign completed. */
  async expire(id: string, now: number): Promise<void> {
    await this.#db.tx(async (q) => {
      await q.all(
        "UPDATE campaign_rows SET status = 'done', reason = 'the campaign ended (endAt) before this row was called again', updated_at = ? WHERE campaign_id = ? AND status = 'pending'",
        [now, id],
      );
      await q.all("UPDATE campaigns SET status = 'completed' WHERE campaign_id = ? AND status = 'running'", [
        id,
      ]);
    });
  }

  /** This bridge is alive: its rows' leases run on. */
  renew(instance: string, leaseUntil: number): Promise<void> {
    return this.#dialing("renew", instance, leaseUntil);
  }

  /** Rows whose lease ran out (or all of `instance`'s: it restarted) filed as `lost`; how many. */
  reclaim(now: number, instance?: string): Promise<number> {
    return instance === undefined ? this.#dialing("reclaim", now) : this.#dialing("reclaim", now, instance);
  }

  /** This bridge takes no more rows (it drains). */
  leave(instance: string): Promise<void> {
    return this.#dialing("leave", instance);
  }

  /** A call's post-call analysis, kept with its attempt for the results. */
  async setAnalysis(callId: string, analysis: unknown): Promise<void> {
    await this.#db.all("UPDATE campaign_attempts SET analysis = ? WHERE call_id = ?", [
      JSON.stringify(analysis),
      callId,
    ]);
  }

  /** Every row with its attempts' calls, in list order. */
  async results(id: string): Promise<ResultRow[]> {
    const rows = await this.#db.all(
      "SELECT r.row_no, r.number, r.time_zone, r.variables, r.status, r.outcome, r.reason, r.attempts, a.started_at, a.analysis FROM campaign_rows r LEFT JOIN campaign_attempts a ON a.campaign_id = r.campaign_id AND a.row_no = r.row_no AND a.attempt = r.attempts WHERE r.campaign_id = ? ORDER BY r.row_no",
      [id],
    );
    const calls = new Map<number, string[]>();
    for (const a of await this.#db.all(
      "SELECT row_no, call_id FROM campaign_attempts WHERE campaign_id = ? AND call_id IS NOT NULL ORDER BY row_no, attempt",
      [id],
    )) {
      const list = calls.get(num(a.row_no)) ?? [];
      list.push(String(a.call_id));
      calls.set(num(a.row_no), list);
    }
    return rows.map((r) => resultOf(r, calls.get(num(r.row_no)) ?? []));
  }

  close(): Promise<void> {
    return this.#db.close();
  }
}

function campaignOf(r: SqlRow): Campaign {
  return {
    id: String(r.campaign_id),
    name: String(r.name),
    status: String(r.status) as CampaignStatus,
    settings: JSON.parse(String(r.settings)) as CampaignSettings,
    createdAt: String(r.created_at),
    ...(r.paused_reason ? { pausedReason: String(r.paused_reason) } : {}),
  };
}

function resultOf(r: SqlRow, callIds: string[]): ResultRow {
  const analysis = r.analysis
    ? (JSON.parse(String(r.analysis)) as {
        status?: string;
        summary?: string;
        fields?: Record<string, unknown>;
      })
    : undefined;
  return {
    number: String(r.number),
    ...(r.time_zone ? { timeZone: String(r.time_zone) } : {}),
    variables: JSON.parse(String(r.variables)) as Record<string, string>,
    status: String(r.status) as RowStatus,
    ...(r.outcome ? { outcome: String(r.outcome) as AttemptOutcome } : {}),
    ...(r.reason ? { reason: String(r.reason) } : {}),
    attempts: num(r.attempts),
    callIds,
    ...(r.started_at ? { lastAttemptAt: new Date(num(r.started_at)).toISOString() } : {}),
    ...(analysis?.status === "done"
      ? {
          analysis: {
            ...(analysis.summary ? { summary: analysis.summary } : {}),
            ...(analysis.fields ? { fields: analysis.fields } : {}),
          },
        }
      : {}),
  };
}
