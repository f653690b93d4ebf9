// A row's way through dialling, in the store: taken (claimed) in one transaction that reads the
// campaign's pace on its row (locked) and every bridge's calls in progress (campaign_bridges), so
// the concurrency cap holds over all bridges without counting rows; then its call linked, its
// attempt finished (the retry policy deciding what comes next) or put back, written in batches;
// and, when its bridge stops renewing the lease, filed as `lost`. Each transition out of `dialing`
// is conditional on the row still being that attempt; then its bridge's count is counted again (its
// own batch) or taken down by the rows it lost (another bridge's sweep). Statements go in batches,
// COMMIT with the last, so that a claim or a batch of writes costs PostgreSQL two or three round trips.
import type { AttemptOutcome, CampaignSettings, RowStatus } from "./campaign.ts";
import { take } from "./pacing.ts";
import { afterAttempt, type RetryDecision } from "./retry-policy.ts";
import { marks, type Sql, type SqlEngine, type SqlRow, type Stmt } from "./sql.ts";

/** A row taken for dialling: what to call, which attempt this is. */
export interface ClaimedRow {
  readonly campaignId: string;
  readonly rowNo: number;
  readonly attempt: number;
  readonly number: string;
  readonly variables: Record<string, string>;
}

export interface ClaimRequest {
  readonly campaignId: string;
  readonly instance: string;
  /** Epoch ms, the campaign's clock. */
  readonly now: number;
  readonly leaseUntil: number;
  /** Calls this bridge may still place (its outbound limits' headroom). */
  readonly headroom: number;
  /** Calling hours: rows on these zones' clocks may be called now; `campaignOpen` for the campaign's own. */
  readonly openZones: readonly string[];
  readonly campaignOpen: boolean;
  /** A bridge that asked for rows within this long (or has calls) shares the concurrency. */
  readonly activeMs: number;
  /**
   * PostgreSQL: the due rows are read (and locked) with the campaign's row, in its round trip, at
   * most this many, when the scheduler's copy of the calling hours' `in` is still the campaign's:
   * one round trip fewer per claim. Those the pace or the cap then leave are unlocked at commit;
   * when more are wanted than were read, and there may be more, they are read again as without it.
   */
  readonly guess?: { readonly rows: number; readonly hoursIn: CampaignSettings["callingHours"]["in"] };
}

export interface ClaimResult {
  readonly rows: ClaimedRow[];
  /** The campaign is no longer running (paused, canceled, completed elsewhere): its status. */
  readonly stopped?: string;
  /** The pace allows the next call in this long (it held calls back). */
  readonly nextInMs?: number;
  /** No row is due before this time (epoch ms): the earliest retry waiting. */
  readonly dueAt?: number;
  /** The campaign has nothing left to call: it was marked completed. */
  readonly completed?: boolean;
}

/** What the scheduler writes as calls are placed and end, applied in batches. */
export type CampaignWrite =
  | { readonly kind: "link"; readonly row: ClaimedRow; readonly callId: string }
  | {
      readonly kind: "finish";
      readonly row: ClaimedRow;
      readonly outcome: AttemptOutcome;
      readonly reason: string;
      readonly at: number;
      /** The campaign's retry policy and end, as the writer knows them (else read from the store). */
      readonly policy?: Policy;
    }
  /** The bridge would not place the call now (its limits, a drain): the row waits for `retryAt`, the attempt unmade. */
  | { readonly kind: "unclaim"; readonly row: ClaimedRow; readonly retryAt: number; readonly at: number };

/** What decides an attempt's sequel: the retry policy (fixed at creation) and the end (endAt). */
export type Policy = Pick<CampaignSettings, "retry" | "endAt">;

const num = (v: unknown) => Number(v ?? 0);
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Takes the rows this bridge may dial now: due, within calling hours, as many as the pace, the cap and its share allow. */
export async function claimRows(db: SqlEngine, r: ClaimRequest): Promise<ClaimResult> {
  return (await claimWith(db, r, [])).claim;
}

/** A claim whose transaction first runs `before` (a batch of writes riding along): their rows too. */
async function claimWith(
  db: SqlEngine,
  r: ClaimRequest,
  before: readonly Stmt[],
): Promise<{ claim: ClaimResult; before: SqlRow[][] }> {
  const lock = db.locks ? " FOR UPDATE" : "";
  const skipLocked = db.locks ? " FOR UPDATE SKIP LOCKED" : "";
  let ran: SqlRow[][] = [];
  const guessFilter = db.locks && r.guess && r.guess.rows > 0 ? zoneFilterOf(r.guess.hoursIn, r) : undefined;
  const dueRows = (filter: { sql: string; params: string[] }, n: number): Stmt => ({
    sql: `SELECT row_no, number, variables, attempts FROM campaign_rows WHERE campaign_id = ? AND status = 'pending' AND next_at <= ?${filter.sql} ORDER BY next_at, row_no LIMIT ?${skipLocked}`,
    params: [r.campaignId, r.now, ...filter.params, n],
  });
  const claim = await db.tx(async (q): Promise<ClaimResult> => {
    const read = await q.batch([
      ...before,
      {
        sql: `SELECT status, settings, tokens, tokens_at FROM campaigns WHERE campaign_id = ?${lock}`,
        params: [r.campaignId],
      },
      {
        sql: "SELECT instance, live, seen_at FROM campaign_bridges WHERE campaign_id = ?",
        params: [r.campaignId],
      },
      ...(guessFilter ? [dueRows(guessFilter, r.guess!.rows)] : []),
    ]);
    ran = read.slice(0, before.length);
    const [campaign, bridges, guessed] = read.slice(before.length);
    const c = campaign?.[0];
    if (c?.status !== "running") return { rows: [], stopped: String(c?.status ?? "gone") };
    const settings = JSON.parse(String(c.settings)) as CampaignSettings;
    const share = shareOf(bridges ?? [], r, settings.concurrency);
    const seen: Stmt = {
      sql: "INSERT INTO campaign_bridges (campaign_id, instance, live, seen_at) VALUES (?, ?, ?, ?) ON CONFLICT (campaign_id, instance) DO UPDATE SET live = campaign_bridges.live + excluded.live, seen_at = excluded.seen_at",
      params: [r.campaignId, r.instance, 0, r.now],
    };
    // Seen lately: the other bridges count this one in the share without a write per claim.
    const note = share.seenAt < r.now - r.activeMs / 4 ? [seen] : [];
    const wanted = Math.min(share.room, r.headroom);
    const paced =
      wanted > 0
        ? take({ tokens: Number(c.tokens), at: num(c.tokens_at) }, r.now, settings.pacePerMinute, wanted)
        : undefined;
    const zoneFilter = zoneFilterOf(settings.callingHours.in, r);
    if (!paced || paced.n === 0 || !zoneFilter) {
      await q.batch(note, { commit: true });
      return paced?.n === 0 ? { rows: [], nextInMs: paced.nextInMs } : { rows: [] };
    }
    // The rows read with the campaign serve when they were read as its hours say and were all
    // there were, or more than the pace allows now.
    const guessServes =
      guessed &&
      r.guess!.hoursIn === settings.callingHours.in &&
      (guessed.length < r.guess!.rows || guessed.length >= paced.n);
    const due = guessServes ? guessed.slice(0, paced.n) : (await q.batch([dueRows(zoneFilter, paced.n)]))[0]!;
    const later =
      due.length < paced.n ? await laterRows(q, r, share.total + due.length) : ({} as Partial<ClaimResult>);
    if (due.length === 0) {
      await q.batch(note, { commit: true });
      return { rows: [], ...later };
    }
    const nos = due.map((d) => num(d.row_no));
    await q.batch(
      [
        {
          sql: `UPDATE campaign_rows SET status = 'dialing', attempts = attempts + 1, claimed_by = ?, lease_until = ?, updated_at = ? WHERE campaign_id = ? AND row_no IN (${marks(nos.length)})`,
          params: [r.instance, r.leaseUntil, r.now, r.campaignId, ...nos],
        },
        {
          sql: `INSERT INTO campaign_attempts (campaign_id, row_no, attempt, instance, started_at) VALUES ${due.map(() => `(${marks(5)})`).join(", ")}`,
          params: due.flatMap((d) => [r.campaignId, num(d.row_no), num(d.attempts) + 1, r.instance, r.now]),
        },
        {
          sql: "UPDATE campaigns SET tokens = ?, tokens_at = ? WHERE campaign_id = ?",
          params: [paced.bucket.tokens + (paced.n - due.length), paced.bucket.at, r.campaignId],
        },
        { ...seen, params: [r.campaignId, r.instance, due.length, r.now] },
      ],
      { commit: true },
    );
    return {
      rows: due.map((d) => ({
        campaignId: r.campaignId,
        rowNo: num(d.row_no),
        attempt: num(d.attempts) + 1,
        number: String(d.number),
        variables: JSON.parse(String(d.variables)) as Record<string, string>,
      })),
      ...(due.length < paced.n ? later : { nextInMs: paced.nextInMs }),
    };
  });
  return { claim, before: ran };
}

/**
 * How many more calls this bridge may have: the cap less every bridge's calls, and no more than
 * its share of the cap among the bridges working the campaign (those with calls, or that asked
 * lately), so one bridge does not take every place another's calls free.
 */
function shareOf(
  bridges: SqlRow[],
  r: ClaimRequest,
  concurrency: number,
): { room: number; total: number; seenAt: number } {
  let total = 0;
  let own = 0;
  let seenAt = Number.NEGATIVE_INFINITY;
  let others = 0;
  for (const b of bridges) {
    const live = num(b.live);
    total += live;
    if (b.instance === r.instance) {
      own = live;
      seenAt = num(b.seen_at);
    } else if (live > 0 || num(b.seen_at) >= r.now - r.activeMs) others++;
  }
  const share = Math.ceil(concurrency / (others + 1));
  return { room: Math.min(concurrency - total, share - own), total, seenAt };
}

/** Nothing more is due now: when the next row is, or (no row pending, no call out) the campaign is done. */
async function laterRows(q: Sql, r: ClaimRequest, dialing: number): Promise<Partial<ClaimResult>> {
  const next = (
    await q.all(
      "SELECT min(next_at) AS next FROM campaign_rows WHERE campaign_id = ? AND status = 'pending'",
      [r.campaignId],
    )
  )[0]?.next;
  if (next !== null && next !== undefined) return num(next) > r.now ? { dueAt: num(next) } : {};
  if (dialing > 0) return {};
  await q.all("UPDATE campaigns SET status = 'completed' WHERE campaign_id = ?", [r.campaignId]);
  return { completed: true };
}

function zoneFilterOf(
  hoursIn: CampaignSettings["callingHours"]["in"],
  r: ClaimRequest,
): { sql: string; params: string[] } | undefined {
  if (hoursIn === "campaign") return r.campaignOpen ? { sql: "", params: [] } : undefined;
  const zones = r.openZones;
  const own = r.campaignOpen ? " OR time_zone IS NULL" : "";
  if (zones.length === 0) return own ? { sql: " AND time_zone IS NULL", params: [] } : undefined;
  return { sql: ` AND (time_zone IN (${marks(zones.length)})${own})`, params: [...zones] };
}

/**
 * Applies `writes` of bridge `instance` in one transaction. Each says whether it still applied:
 * a finish or unclaim of an attempt that is no longer the row's (its lease ran out and another
 * bridge took it) only completes that attempt's own record.
 */
export async function applyWrites(
  db: SqlEngine,
  instance: string,
  writes: readonly CampaignWrite[],
): Promise<boolean[]> {
  if (writes.length === 0) return [];
  return db.tx(async (q) => {
    const ids = [
      ...new Set(writes.filter((w) => w.kind === "finish" && !w.policy).map((w) => w.row.campaignId)),
    ];
    const settings = new Map<string, Policy>();
    const [read] = ids.length
      ? await q.batch([
          {
            sql: `SELECT campaign_id, settings FROM campaigns WHERE campaign_id IN (${marks(ids.length)})`,
            params: ids,
          },
        ])
      : [];
    for (const c of read ?? [])
      settings.set(String(c.campaign_id), JSON.parse(String(c.settings)) as CampaignSettings);
    const plan = writeStatements(instance, writes, settings);
    return plan.applied(await q.batch(plan.stmts, { commit: true }));
  });
}

/** The statements of a batch of writes, and how to read from their rows whether each still applied. */
function writeStatements(
  instance: string,
  writes: readonly CampaignWrite[],
  settings: ReadonlyMap<string, Policy>,
): { stmts: Stmt[]; applied: (rows: SqlRow[][]) => boolean[] } {
  const stmts: Stmt[] = [];
  /** Per write, the statement whose rows say whether the row was still that attempt (-1: none). */
  const telling: number[] = [];
  for (const w of writes) {
    const key = [w.row.campaignId, w.row.rowNo, w.row.attempt];
    if (w.kind === "link") {
      telling.push(-1);
      stmts.push({
        sql: "UPDATE campaign_attempts SET call_id = ? WHERE campaign_id = ? AND row_no = ? AND attempt = ?",
        params: [w.callId, ...key],
      });
    } else if (w.kind === "finish") {
      stmts.push(endAttempt(w.row.campaignId, w.row.rowNo, w.row.attempt, w.outcome, w.reason, w.at));
      telling.push(stmts.length);
      const policy = w.policy ?? settings.get(w.row.campaignId);
      stmts.push(settleRow(w.row, instance, policy, w.outcome, w.reason, w.at));
    } else {
      stmts.push({
        sql: "DELETE FROM campaign_attempts WHERE campaign_id = ? AND row_no = ? AND attempt = ?",
        params: key,
      });
      telling.push(stmts.length);
      stmts.push({
        sql: "UPDATE campaign_rows SET status = 'pending', attempts = attempts - 1, next_at = ?, claimed_by = NULL, lease_until = NULL, updated_at = ? WHERE campaign_id = ? AND row_no = ? AND status = 'dialing' AND attempts = ? AND claimed_by = ? RETURNING row_no",
        params: [w.retryAt, w.at, ...key, instance],
      });
    }
  }
  // This bridge's calls in progress, counted again where rows left `dialing` (only its own
  // transactions move its count while it lives, so the count is exact, and any drift heals).
  const moved = [...new Set(writes.filter((w) => w.kind !== "link").map((w) => w.row.campaignId))];
  for (const campaignId of moved.sort(cmp))
    stmts.push({
      sql: "UPDATE campaign_bridges SET live = (SELECT count(*) FROM campaign_rows r WHERE r.campaign_id = ? AND r.claimed_by = ? AND r.status = 'dialing') WHERE campaign_id = ? AND instance = ?",
      params: [campaignId, instance, campaignId, instance],
    });
  return { stmts, applied: (rows) => telling.map((i) => i < 0 || (rows[i]?.length ?? 0) > 0) };
}

function endAttempt(
  campaignId: string,
  rowNo: number,
  attempt: number,
  outcome: AttemptOutcome,
  reason: string,
  at: number,
): Stmt {
  return {
    sql: "UPDATE campaign_attempts SET ended_at = ?, outcome = ?, reason = ? WHERE campaign_id = ? AND row_no = ? AND attempt = ?",
    params: [at, outcome, reason.slice(0, 500), campaignId, rowNo, attempt],
  };
}

/**
 * The row after its attempt: done, skipped (do-not-call), waiting for its retry as the policy
 * says, or canceled with its campaign; only while it is still that attempt of that bridge.
 */
function settleRow(
  row: { campaignId: string; rowNo: number; attempt: number },
  claimedBy: string,
  settings: Policy | undefined,
  outcome: AttemptOutcome,
  reason: string,
  now: number,
): Stmt {
  const endAt = settings?.endAt ? Date.parse(settings.endAt) : undefined;
  const next: RetryDecision = settings
    ? afterAttempt(settings.retry, outcome, row.attempt, now, endAt)
    : { retry: false };
  const status: RowStatus = outcome === "do-not-call" ? "skipped" : next.retry ? "pending" : "done";
  return {
    sql: "UPDATE campaign_rows SET status = CASE WHEN (SELECT status FROM campaigns WHERE campaign_id = ?) = 'canceled' THEN 'canceled' ELSE ? END, outcome = ?, reason = ?, next_at = ?, claimed_by = NULL, lease_until = NULL, updated_at = ? WHERE campaign_id = ? AND row_no = ? AND status = 'dialing' AND attempts = ? AND claimed_by = ? RETURNING row_no",
    params: [
      row.campaignId,
      status,
      outcome,
      reason.slice(0, 500),
      next.retry ? next.at : now,
      now,
      row.campaignId,
      row.rowNo,
      row.attempt,
      claimedBy,
    ],
  };
}

/** Calls out taken off each bridge's count; in one order, so two transactions never wait on each other round a loop. */
function release(freed: { campaignId: string; instance: string; n: number }[]): Stmt[] {
  return freed
    .sort((a, b) => cmp(a.campaignId, b.campaignId) || cmp(a.instance, b.instance))
    .map((f) => ({
      sql: "UPDATE campaign_bridges SET live = live - ? WHERE campaign_id = ? AND instance = ?",
      params: [f.n, f.campaignId, f.instance],
    }));
}

/**
 * Rows whose bridge stopped renewing their lease (or, with `instance`, every row that bridge
 * held: it restarted): their attempt is filed as `lost` and the policy decides. Returns how many.
 */
export async function reclaimRows(db: SqlEngine, now: number, instance?: string): Promise<number> {
  return db.tx(async (q) => {
    const where = instance === undefined ? "r.lease_until < ?" : "r.claimed_by = ?";
    const lost = await q.all(
      `SELECT r.campaign_id, r.row_no, r.attempts, r.claimed_by, c.settings FROM campaign_rows r JOIN campaigns c ON c.campaign_id = r.campaign_id WHERE r.status = 'dialing' AND ${where} LIMIT 500${db.locks ? " FOR UPDATE OF r SKIP LOCKED" : ""}`,
      [instance ?? now],
    );
    const stmts: Stmt[] = [];
    for (const l of lost) {
      const row = { campaignId: String(l.campaign_id), rowNo: num(l.row_no), attempt: num(l.attempts) };
      const by = String(l.claimed_by);
      const why = `lost: ${by} stopped ${instance === undefined ? "renewing its lease" : "(restarted)"}`;
      const settings = JSON.parse(String(l.settings)) as CampaignSettings;
      stmts.push(endAttempt(row.campaignId, row.rowNo, row.attempt, "lost", why, now));
      stmts.push(settleRow(row, by, settings, "lost", why, now));
    }
    const results = await q.batch(stmts);
    const freed = new Map<string, { campaignId: string; instance: string; n: number }>();
    lost.forEach((l, i) => {
      if (!results[2 * i + 1]?.length) return;
      const key = `${String(l.campaign_id)}\n${String(l.claimed_by)}`;
      const f = freed.get(key) ?? { campaignId: String(l.campaign_id), instance: String(l.claimed_by), n: 0 };
      f.n++;
      freed.set(key, f);
    });
    await q.batch(release([...freed.values()]));
    if (instance !== undefined)
      // Starting again: this bridge's counts are its rows still dialling (none, unless more than a batch was lost).
      await q.all(
        "UPDATE campaign_bridges SET live = (SELECT count(*) FROM campaign_rows r WHERE r.campaign_id = campaign_bridges.campaign_id AND r.claimed_by = campaign_bridges.instance AND r.status = 'dialing') WHERE instance = ?",
        [instance],
      );
    return lost.length;
  });
}

/** This bridge is alive: its rows' leases run on. */
export async function renewLeases(db: SqlEngine, instance: string, leaseUntil: number): Promise<void> {
  await db.all("UPDATE campaign_rows SET lease_until = ? WHERE claimed_by = ? AND status = 'dialing'", [
    leaseUntil,
    instance,
  ]);
}

/** This bridge stops asking for rows (it drains): the others' shares grow at once. */
export async function leaveCampaigns(db: SqlEngine, instance: string): Promise<void> {
  await db.all("UPDATE campaign_bridges SET seen_at = 0 WHERE instance = ?", [instance]);
}

/** What one wake of a bridge's scheduler asks of the store: its calls' writes, then its claims. */
export interface WorkResult {
  /** Per write, whether it still applied (see applyWrites). */
  readonly applied: boolean[];
  /** Per claim asked, in order; `failed` when that claim's transaction did (the others stand). */
  readonly claims: (ClaimResult & { readonly failed?: string })[];
}

/**
 * A wake's work in one call (on SQLite, one message to its thread): the writes queued since the
 * last, then each campaign's claim, the bridge's headroom shared between them in turn.
 */
export async function work(
  db: SqlEngine,
  instance: string,
  writes: readonly CampaignWrite[],
  claims: readonly ClaimRequest[],
): Promise<WorkResult> {
  // The writes ride in the first claim's transaction (a round trip fewer), unless one needs its
  // campaign's policy read first; a failure there fails them both, to be tried again.
  const ride = claims.length > 0 && !writes.some((w) => w.kind === "finish" && !w.policy);
  let applied: boolean[] = [];
  const results: WorkResult["claims"] = [];
  let taken = 0;
  if (ride) {
    const plan = writeStatements(instance, writes, new Map());
    const first = await claimWith(db, claims[0]!, plan.stmts);
    applied = plan.applied(first.before);
    taken = first.claim.rows.length;
    results.push(first.claim);
  } else applied = await applyWrites(db, instance, writes);
  for (const r of claims.slice(results.length)) {
    const headroom = r.headroom - taken;
    if (headroom <= 0) {
      results.push({ rows: [] });
      continue;
    }
    try {
      const claimed = await claimRows(db, { ...r, headroom });
      taken += claimed.rows.length;
      results.push(claimed);
    } catch (err) {
      results.push({ rows: [], failed: (err as Error).message });
    }
  }
  return { applied, claims: results };
}

/** The operations a database engine may run beside itself (`SqlEngine.near`): SQLite runs them on its thread. */
export const DIALING = {
  work,
  claim: claimRows,
  apply: applyWrites,
  reclaim: reclaimRows,
  renew: renewLeases,
  leave: leaveCampaigns,
} as const;
export type DialingOp = keyof typeof DIALING;
export type DialingArgs<K extends DialingOp> = (typeof DIALING)[K] extends (
  db: SqlEngine,
  ...args: infer A
) => unknown
  ? A
  : never;
export type DialingResult<K extends DialingOp> = Awaited<ReturnType<(typeof DIALING)[K]>>;
