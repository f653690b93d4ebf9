// Works through the running campaigns on this bridge: it takes the rows it may dial (the store
// holds the pace, the concurrency over every bridge and this bridge's share of it; its outbound
// limits bound what it asks for), places their calls through the same path as POST /calls, and
// files each attempt's outcome when its call ends. A refusal of the outbound limits or a drain
// (429/503) puts the row back and waits Retry-After.
//
// It wakes when there is something to do, not on a beat: a call of its own ended (a place freed),
// the pace's next call, the next retry coming due, an operator's change; a slow look (`pollMs`)
// covers what other bridges do (their campaigns, their freed places) and calling hours opening.
// What calls write (links, outcomes) is queued and goes to the store with the wake's claims, in one
// call (store-dialing.ts `work`), so a call's end costs the call path a push onto an array. Timers
// go through the injected clock and calendar time through `now`, so tests run it on virtual time.
import type { Clock, TimerHandle } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import type { PlaceResult } from "../outbound/calls.ts";
import { type DialBody, dialTarget } from "../outbound/request.ts";
import { isOpen } from "./calling-hours.ts";
import type { AttemptOutcome, Campaign } from "./campaign.ts";
import type { CampaignStore, CampaignWrite, ClaimedRow, ClaimRequest, WorkResult } from "./store.ts";
import type { Policy } from "./store-dialing.ts";

/** What the scheduler did, for metrics. */
export interface SchedulerObserver {
  /** Rows taken for dialling. */
  claimed(campaignId: string, rows: number): void;
  /** A call placed for a row (`row.attempt` > 1: a retry). */
  dialled(campaignId: string, row: ClaimedRow): void;
  /** A row not dialled: on a do-not-call list (`do-not-call`), refused by the outbound limits or a drain (`deferred`), or refused for good (`failed`). */
  notDialled(campaignId: string, why: "do-not-call" | "deferred" | "failed"): void;
  /** Rows whose bridge died (or restarted) filed as `lost`. */
  lost(rows: number): void;
}

export interface SchedulerDeps {
  readonly store: CampaignStore;
  /** This bridge's name (holds its rows' leases). */
  readonly instance: string;
  readonly clock: Clock;
  /** Calendar time, epoch ms: calling hours, pace, leases. */
  readonly now: () => number;
  readonly leaseMs: number;
  /** Places a call as POST /calls does (a number on the bridge's do-not-call list: 403). */
  readonly place: (body: DialBody) => PlaceResult;
  /** Cancels or hangs up a call this bridge placed (its campaign was canceled). */
  readonly cancelCall: (callId: string) => void;
  /** Calls this bridge's outbound limits still allow at once. */
  readonly headroom: () => number;
  readonly log: Logger;
  /** Longest wait before looking again (other bridges' campaigns and freed places, calling hours opening). */
  readonly pollMs?: number;
  /** How long work waits to be done together: calls' ends written and their places refilled in one go. */
  readonly batchMs?: number;
  readonly observer?: SchedulerObserver;
}

/** A running campaign this bridge works, and when to ask for its rows next (clock ms). */
interface Working {
  campaign: Campaign;
  /** The campaign's own do-not-call numbers, as dialled (separators dropped). */
  doNotCall: Set<string>;
  nextAt: number;
  /** Refused by the outbound limits or a drain: no claim before this (clock ms). */
  holdUntil: number;
  /** When this bridge last asked for its rows (calendar ms). */
  askedAt?: number;
}

interface Queued {
  readonly write: CampaignWrite;
  /** When it was first tried (clock ms): given up after a lease's time, when another bridge may have the row. */
  readonly since: number;
}

const ZONES_TTL_MS = 30_000;
/** The outbound limits were full: look again this soon (one-off calls ending free them unannounced). */
const HEADROOM_RECHECK_MS = 250;
const MAX_BATCH = 500;

export class CampaignScheduler {
  readonly #d: SchedulerDeps;
  readonly #poll: number;
  readonly #batch: number;
  /** Calls this bridge placed for a campaign, not ended yet. */
  readonly #live = new Map<string, ClaimedRow>();
  readonly #working = new Map<string, Working>();
  readonly #zones = new Map<string, { at: number; zones: string[] }>();
  /** Calls that ended before placing them returned (their id unknown until then). */
  readonly #early = new Map<string, { outcome: AttemptOutcome; reason: string }>();
  #writes: Queued[] = [];
  #flushing: Promise<boolean> | undefined;
  /** The store refused the last batch: no new try before this (clock ms). */
  #writesHeldUntil = 0;
  readonly #pending = new Set<Promise<unknown>>();
  #timer: TimerHandle | undefined;
  #timerAt = Number.POSITIVE_INFINITY;
  #ticking: Promise<void> | undefined;
  /** Asked for while a tick ran: the earliest next tick. */
  #wantAt = Number.POSITIVE_INFINITY;
  #stopped = true;
  #nextRefresh = 0;
  #nextSweep = 0;
  #nextRenew = 0;
  /** Since when this bridge's ticks have reached the store without a failure (clock time). */
  #inTouchSince: number | undefined;
  /** Ticks run (tests wait on it). */
  ticks = 0;

  constructor(deps: SchedulerDeps) {
    this.#d = deps;
    this.#poll = deps.pollMs ?? 1000;
    this.#batch = deps.batchMs ?? 200;
  }

  /** Calls in progress for campaigns on this bridge. */
  get live(): number {
    return this.#live.size;
  }

  /** Files the rows an earlier run of this bridge left dialling as lost, then starts. */
  async start(): Promise<void> {
    const released = await this.#d.store.reclaim(this.#d.now(), this.#d.instance);
    if (released) {
      this.#d.observer?.lost(released);
      this.#d.log.warn(
        { rows: released },
        "campaigns: rows this bridge was dialling when it stopped are filed as lost",
      );
    }
    this.#stopped = false;
    this.wake();
  }

  /** Something changed (a campaign created, resumed, changed, given rows): read the campaigns and claim now. */
  wake(): void {
    this.#nextRefresh = 0;
    for (const w of this.#working.values()) w.nextAt = 0;
    this.#arm(this.#d.clock.now());
  }

  /** Resolves once the tick under way (if any) is done and the store has every write so far. */
  async settled(): Promise<void> {
    for (;;) {
      if (this.#ticking) await this.#ticking;
      else if (this.#writes.length || this.#flushing) {
        if (!(await this.#flush())) return;
      } else if (this.#pending.size) await Promise.all([...this.#pending]);
      else return;
    }
  }

  /** No more claims (the bridge drains); calls in progress still have their outcomes filed. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    await this.#ticking;
    await this.#d.store
      .leave(this.#d.instance)
      .catch((err: Error) => this.#d.log.warn({ err }, "campaigns: could not say this bridge leaves"));
  }

  /** Ends this bridge's calls of a campaign (cancel). */
  cancelCalls(campaignId: string): void {
    for (const [callId, row] of this.#live) if (row.campaignId === campaignId) this.#d.cancelCall(callId);
  }

  /** The rows' zones changed (rows added): read them again at the next claim. */
  forgetZones(campaignId: string): void {
    this.#zones.delete(campaignId);
  }

  /**
   * A call this bridge placed ended: its attempt's outcome is queued for the store, and its place
   * refilled at the next wake. A call that ended while it was being placed (a dialler failing at
   * once) is kept until placing returns its id.
   */
  callEnded(callId: string, outcome: AttemptOutcome, reason: string): boolean {
    const row = this.#live.get(callId);
    if (!row) {
      this.#early.set(callId, { outcome, reason });
      if (this.#early.size > 64) this.#early.delete(this.#early.keys().next().value!);
      return false;
    }
    this.#live.delete(callId);
    const w = this.#working.get(row.campaignId);
    if (w) w.nextAt = Math.min(w.nextAt, this.#d.clock.now() + this.#batch);
    const policy = w ? policyOf(w.campaign) : undefined;
    this.#queue({ kind: "finish", row, outcome, reason, at: this.#d.now(), ...(policy ? { policy } : {}) });
    return true;
  }

  /** Is this call one of a campaign's (placed by this bridge, still live)? */
  has(callId: string): boolean {
    return this.#live.has(callId);
  }

  /** A tick no later than `at` (clock ms). */
  #arm(at: number): void {
    if (this.#ticking) {
      this.#wantAt = Math.min(this.#wantAt, at);
      return;
    }
    if (this.#timer && this.#timerAt <= at) return;
    const { clock } = this.#d;
    clock.clearTimeout(this.#timer);
    this.#timerAt = at;
    this.#timer = clock.setTimeout(() => this.#run(), Math.max(0, at - clock.now()));
  }

  #run(): void {
    this.#timer = undefined;
    this.#timerAt = Number.POSITIVE_INFINITY;
    this.#ticking = this.#tick().finally(() => {
      this.#ticking = undefined;
      const at = Math.min(this.#wantAt, this.#nextDue());
      this.#wantAt = Number.POSITIVE_INFINITY;
      if (at < Number.POSITIVE_INFINITY) this.#arm(at);
    });
  }

  /** When the next tick has work (clock ms): writes waiting, a campaign's next claim, a look round. */
  #nextDue(): number {
    const t = this.#d.clock.now();
    let at = this.#writes.length
      ? Math.max(t + this.#batch, this.#writesHeldUntil)
      : Number.POSITIVE_INFINITY;
    if (this.#stopped) return at;
    at = Math.min(at, this.#nextRefresh, this.#nextSweep);
    if (this.#live.size) at = Math.min(at, this.#nextRenew);
    for (const w of this.#working.values()) at = Math.min(at, w.nextAt);
    return at;
  }

  /** One wake: what is due on the slow beat, then the queued writes and the claims due, together. Never rejects. */
  async #tick(): Promise<void> {
    this.ticks++;
    try {
      if (this.#stopped) {
        await this.#flush();
        return;
      }
      this.#inTouchSince ??= this.#d.clock.now();
      await this.#lookRound();
      await this.#work();
    } catch (err) {
      this.#inTouchSince = undefined;
      this.#d.log.warn({ err }, "campaigns: a tick failed (the store unreachable?); trying again");
      this.#nextRefresh = this.#d.clock.now() + this.#poll;
      for (const w of this.#working.values()) w.nextAt = Math.max(w.nextAt, this.#nextRefresh);
    }
  }

  /** The writes queued and every due campaign's claim, in one call to the store. */
  async #work(): Promise<void> {
    const t = this.#d.clock.now();
    const now = this.#d.now();
    const due: Working[] = [];
    const requests: ClaimRequest[] = [];
    const headroom = this.#d.headroom();
    for (const w of [...this.#working.values()]) {
      if (w.nextAt > t) continue;
      const request = await this.#request(w, t, now, headroom);
      if (!request) continue;
      due.push(w);
      requests.push(request);
    }
    if (!requests.length && !this.#writes.length) return;
    // One writer at a time: settled() may be writing.
    while (this.#flushing) await this.#flushing;
    const batch = this.#writes.splice(0, MAX_BATCH);
    const work = this.#d.store.work(
      this.#d.instance,
      batch.map((q) => q.write),
      requests,
    );
    this.#flushing = work.then(
      () => true,
      () => false,
    );
    let result: WorkResult;
    try {
      result = await work;
    } catch (err) {
      this.#keep(batch, err as Error);
      throw err;
    } finally {
      this.#flushing = undefined;
    }
    for (const [i, w] of due.entries()) this.#claimed(w, result.claims[i]!, t, now);
  }

  /** What is due on the slow beat: reading the running campaigns, leases lost and renewed. */
  async #lookRound(): Promise<void> {
    const { store, instance, leaseMs, clock } = this.#d;
    const t = clock.now();
    const now = this.#d.now();
    if (t >= this.#nextSweep) {
      // After an outage every bridge's leases ran out together: others' rows are judged only once
      // this bridge has been in touch for a whole lease, time enough for the live ones to renew.
      const judgeFrom = (this.#inTouchSince ?? t) + leaseMs;
      this.#nextSweep = t < judgeFrom ? judgeFrom : t + leaseMs / 2;
      const lost = t < judgeFrom ? 0 : await store.reclaim(now);
      if (lost) {
        this.#d.observer?.lost(lost);
        this.#d.log.warn(
          { rows: lost },
          "campaigns: rows whose bridge stopped renewing its lease are filed as lost",
        );
      }
    }
    if (this.#live.size && t >= this.#nextRenew) {
      this.#nextRenew = t + leaseMs / 3;
      await store.renew(instance, now + leaseMs);
    }
    if (t >= this.#nextRefresh) {
      this.#nextRefresh = t + this.#poll;
      await this.#refresh(await store.running(), t);
    }
  }

  /** Takes the running campaigns as the store has them; hangs up calls of those canceled. */
  async #refresh(running: Campaign[], t: number): Promise<void> {
    const ids = new Set(running.map((c) => c.id));
    for (const c of running) {
      const w = this.#working.get(c.id);
      if (w) w.campaign = c;
      else this.#working.set(c.id, { campaign: c, doNotCall: doNotCallOf(c), nextAt: t, holdUntil: 0 });
    }
    for (const id of this.#working.keys()) if (!ids.has(id)) this.#working.delete(id);
    const gone = new Set([...this.#live.values()].map((r) => r.campaignId).filter((id) => !ids.has(id)));
    for (const id of gone) if ((await this.#d.store.get(id))?.status === "canceled") this.cancelCalls(id);
  }

  /** What to ask the store for a campaign now; undefined when it waits (held, out of headroom) or is over. */
  async #request(w: Working, t: number, now: number, headroom: number): Promise<ClaimRequest | undefined> {
    const { store, instance, leaseMs } = this.#d;
    const c = w.campaign;
    w.nextAt = t + this.#poll;
    if (w.holdUntil > t) {
      w.nextAt = w.holdUntil;
      return undefined;
    }
    if (c.settings.endAt && Date.parse(c.settings.endAt) <= now) {
      await store.expire(c.id, now);
      this.#working.delete(c.id);
      return undefined;
    }
    if (headroom <= 0) {
      w.nextAt = t + HEADROOM_RECHECK_MS;
      return undefined;
    }
    const zones = await this.#zonesOf(c, now);
    const { callingHours: hours, timeZone, pacePerMinute, concurrency } = c.settings;
    // What the pace has let through since this bridge last asked (its bucket holds two seconds'
    // worth), and one more: about what the claim will take, read with the campaign's row.
    const since = Math.min(now - (w.askedAt ?? 0), 2000);
    w.askedAt = now;
    const rows = Math.min(headroom, concurrency, Math.ceil((since * pacePerMinute) / 60_000) + 1);
    return {
      campaignId: c.id,
      instance,
      now,
      leaseUntil: now + leaseMs,
      headroom,
      openZones: zones.filter((z) => isOpen(hours, z, now)),
      campaignOpen: isOpen(hours, timeZone, now),
      activeMs: leaseMs,
      guess: { rows, hoursIn: hours.in },
    };
  }

  /** A campaign's claim came back: its rows dialled, its next claim set. */
  #claimed(w: Working, claim: WorkResult["claims"][number], t: number, now: number): void {
    const c = w.campaign;
    if (claim.failed) {
      this.#d.log.warn({ campaignId: c.id, why: claim.failed }, "campaigns: a claim failed; trying again");
      return;
    }
    if (claim.stopped || claim.completed) {
      if (claim.completed) this.#d.log.info({ campaignId: c.id }, "campaign: every row is done");
      this.#working.delete(c.id);
      return;
    }
    if (claim.rows.length) this.#d.observer?.claimed(c.id, claim.rows.length);
    for (const row of claim.rows) this.#dial(w, row, now);
    // The pace's next call and the next retry: no sooner than a batch's wait, so calls start in groups.
    if (claim.nextInMs !== undefined)
      w.nextAt = Math.min(w.nextAt, t + Math.max(claim.nextInMs, this.#batch));
    if (claim.dueAt !== undefined)
      w.nextAt = Math.min(w.nextAt, t + Math.max(claim.dueAt - now, this.#batch));
  }

  async #zonesOf(c: Campaign, now: number): Promise<string[]> {
    if (c.settings.callingHours.in === "campaign") return [];
    const cached = this.#zones.get(c.id);
    if (cached && now - cached.at < ZONES_TTL_MS) return cached.zones;
    const zones = await this.#d.store.zones(c.id);
    this.#zones.set(c.id, { at: now, zones });
    return zones;
  }

  #dial(w: Working, row: ClaimedRow, now: number): void {
    const c = w.campaign;
    const t = this.#d.clock.now();
    const observer = this.#d.observer;
    // Refused once (429/503): the rest of this claim waits with it, never placed into the refusal.
    if (w.holdUntil > t) {
      observer?.notDialled(c.id, "deferred");
      this.#queue({ kind: "unclaim", row, retryAt: now + (w.holdUntil - t), at: now });
      return;
    }
    if (w.doNotCall.has(row.number)) {
      observer?.notDialled(c.id, "do-not-call");
      this.#queue({
        kind: "finish",
        row,
        outcome: "do-not-call",
        reason: "on the campaign's do-not-call list at dial time",
        at: now,
        policy: policyOf(c),
      });
      return;
    }
    const placed = this.#d.place(dialBody(c, row));
    if (placed.ok) {
      this.#live.set(placed.callId, row);
      this.#queue({ kind: "link", row, callId: placed.callId });
      observer?.dialled(c.id, row);
      const early = this.#early.get(placed.callId);
      this.#early.delete(placed.callId);
      if (early) this.callEnded(placed.callId, early.outcome, early.reason);
      return;
    }
    if (placed.status === 429 || placed.status === 503) {
      const waitMs = (placed.retryAfterS ?? 5) * 1000;
      w.holdUntil = t + waitMs;
      observer?.notDialled(c.id, "deferred");
      this.#queue({ kind: "unclaim", row, retryAt: now + waitMs, at: now });
      return;
    }
    if (placed.status === 403) {
      // On the bridge's do-not-call list, which the dialling path checks for every call.
      observer?.notDialled(c.id, "do-not-call");
      const reason = placed.message;
      this.#queue({ kind: "finish", row, outcome: "do-not-call", reason, at: now, policy: policyOf(c) });
      return;
    }
    observer?.notDialled(c.id, "failed");
    if (placed.field === "agent" || placed.field === "via") {
      // Every row would fail the same way: the campaign waits for the operator.
      this.#queue({ kind: "unclaim", row, retryAt: now, at: now });
      this.#working.delete(c.id);
      this.#track(this.#d.store.setStatus(c.id, "paused", now, `${placed.field}: ${placed.message}`));
      this.#d.log.warn(
        { campaignId: c.id, why: placed.message },
        "campaign paused: its calls cannot be placed",
      );
      return;
    }
    const reason = `refused: ${placed.field ?? ""} ${placed.message}`;
    this.#queue({ kind: "finish", row, outcome: "failed", reason, at: now, policy: policyOf(c) });
  }

  #queue(write: CampaignWrite): void {
    const t = this.#d.clock.now();
    this.#writes.push({ write, since: t });
    this.#arm(Math.max(t + this.#batch, this.#writesHeldUntil));
  }

  /** Writes what is queued, a batch per transaction; false when the store refused (kept for the next try). */
  async #flush(): Promise<boolean> {
    while (this.#flushing) await this.#flushing;
    while (this.#writes.length) {
      const batch = this.#writes.splice(0, MAX_BATCH);
      this.#flushing = this.#d.store
        .apply(
          this.#d.instance,
          batch.map((q) => q.write),
        )
        .then(
          () => true,
          (err: Error) => {
            this.#keep(batch, err);
            return false;
          },
        );
      const ok = await this.#flushing;
      this.#flushing = undefined;
      if (!ok) return false;
    }
    return true;
  }

  /** The store refused a batch: it is tried again later, but not past a lease's time (the row may be another bridge's by then). */
  #keep(batch: Queued[], err: Error): void {
    const t = this.#d.clock.now();
    const kept = batch.filter((q) => t - q.since < this.#d.leaseMs);
    this.#writes = [...kept, ...this.#writes];
    this.#writesHeldUntil = t + this.#poll;
    this.#d.log.error(
      { err, writes: batch.length, dropped: batch.length - kept.length },
      "campaigns: the store refused calls' outcomes; trying again",
    );
  }

  #track(p: Promise<unknown>): void {
    const tracked = p.catch((err: Error) => this.#d.log.error({ err }, "campaigns: a store write failed"));
    this.#pending.add(tracked);
    void tracked.finally(() => this.#pending.delete(tracked));
  }
}

/** What the store needs to file an attempt's end without reading the campaign again. */
function policyOf(c: Campaign): Policy {
  return { retry: c.settings.retry, ...(c.settings.endAt ? { endAt: c.settings.endAt } : {}) };
}

/** A campaign's `doNotCall` (fixed when it is created) as the numbers its rows hold. */
function doNotCallOf(c: Campaign): Set<string> {
  return new Set(c.settings.doNotCall.map((n) => dialTarget(n, c.settings.via) ?? n));
}

/** The POST /calls body of a row's call. */
function dialBody(c: Campaign, row: ClaimedRow): DialBody {
  const s = c.settings;
  return {
    to: row.number,
    via: s.via,
    agent: s.agent,
    variables: row.variables,
    ...(s.from ? { from: s.from } : {}),
    ...(s.ringTimeoutS ? { ringTimeoutS: s.ringTimeoutS } : {}),
    ...(s.machineDetection ? { machineDetection: s.machineDetection } : {}),
    ...(s.voicemailMessage ? { voicemailMessage: s.voicemailMessage } : {}),
  };
}
