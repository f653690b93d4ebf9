// Delivers end-of-call reports: each is spooled to disk first (spool.ts), then POSTed, signed
// (signature.ts), to the configured URL. A 2xx removes the spool file. No answer, a refused or
// timed-out connection, a 408, 429 or 5xx is tried again after a backoff (backoff.ts; a longer
// Retry-After is honoured), for as long as it takes. Any other 4xx (or a redirect, which is not followed) means the receiver will not take
// this body as it is (a wrong secret, a rejected schema): the file stays, the error is logged, and
// it is tried again only at the next start. On start every report left in the spool is sent, so
// reports survive both a receiver outage and a restart of the bridge. Retry timers go through the
// injected clock; the POSTs are real fetches.

import { followAbort } from "../../api/abort-link.ts";
import { retryAfterMs } from "../../api/http.ts";
import type { Clock, TimerHandle } from "../../core/clock.ts";
import type { Logger } from "../../core/log.ts";
import { type Backoff, DEFAULT_BACKOFF, retryDelayMs } from "./backoff.ts";
import type { CallReport } from "./report.ts";
import { REPORT_ID_HEADER, SIGNATURE_HEADER, signReport, TIMESTAMP_HEADER } from "./signature.ts";
import type { ReportSpool } from "./spool.ts";

/** What one delivery attempt came to. */
export type AttemptResult =
  | { kind: "delivered"; reportId: string; attempt: number; status: number }
  | { kind: "retry"; reportId: string; attempt: number; status?: number; error?: string; retryInMs: number }
  | { kind: "rejected"; reportId: string; attempt: number; status: number };

export interface ReporterOptions {
  url: string;
  secret: string;
  spool: ReportSpool;
  clock: Clock;
  log: Logger;
  /** How long one attempt may take, ms (default 10 s). */
  timeoutMs?: number;
  backoff?: Backoff;
  /** Reports sent at the same time, at most (default 4): a long outage's backlog goes out a few at a time. */
  maxInFlight?: number;
  /** Jitter source (default Math.random). */
  random?: () => number;
  /** Wall time for the timestamp header, ms (default Date.now). */
  wallNow?: () => number;
  /** Hears every attempt's outcome (tests; counters). */
  onAttempt?: (result: AttemptResult) => void;
}

export class CallReporter {
  readonly #o: Required<Omit<ReporterOptions, "onAttempt">> & Pick<ReporterOptions, "onAttempt">;
  /** Reports not delivered yet (and not rejected), with the attempts made so far. */
  readonly #attempts = new Map<string, number>();
  /** Bodies that could not be spooled (full disk): kept here instead, for this run only. */
  readonly #unspooled = new Map<string, Buffer>();
  readonly #timers = new Map<string, TimerHandle>();
  readonly #due: string[] = [];
  /** Reports being made or written to the spool. */
  readonly #writes = new Set<Promise<void>>();
  /** Attempts in flight. */
  readonly #sends = new Set<Promise<void>>();
  readonly #abort = new AbortController();
  #inFlight = 0;
  #closed = false;

  constructor(opts: ReporterOptions) {
    this.#o = {
      timeoutMs: 10_000,
      backoff: DEFAULT_BACKOFF,
      maxInFlight: 4,
      random: Math.random,
      wallNow: Date.now,
      ...opts,
    };
  }

  /** Reports not yet delivered (waiting, in flight or between attempts); rejected ones are not counted. */
  get pending(): number {
    return this.#attempts.size;
  }

  /** Sends every report left in the spool by an earlier run. */
  async start(): Promise<void> {
    const ids = await this.#o.spool.pending();
    if (ids.length) {
      this.#o.log.info(
        { reports: ids.length, dir: this.#o.spool.dir },
        "call reports: sending the reports not delivered before",
      );
    }
    for (const id of ids) this.#enqueue(id);
  }

  /**
   * Spools the report, then sends it. The returned promise settles once it is on disk (it never
   * rejects: a failed write is logged and the report kept in memory). The report may still be in
   * the making (waiting for the recording to close): close() waits for it.
   */
  submit(report: CallReport | PromiseLike<CallReport | undefined> | undefined): Promise<void> {
    return track(this.#writes, this.#spool(report));
  }

  async #spool(pending: CallReport | PromiseLike<CallReport | undefined> | undefined): Promise<void> {
    const report = await pending;
    if (!report) return;
    const body = Buffer.from(JSON.stringify(report));
    try {
      await this.#o.spool.put(report.reportId, body);
    } catch (err) {
      this.#unspooled.set(report.reportId, body);
      this.#o.log.error(
        { err, reportId: report.reportId, callId: report.callId, dir: this.#o.spool.dir },
        "call report: cannot write it to the spool; sending it from memory (lost if the bridge stops first)",
      );
    }
    this.#enqueue(report.reportId);
  }

  /** Stops sending: timers cancelled, attempts in flight aborted. What is not delivered stays spooled. */
  async close(): Promise<void> {
    // Reports still being made or written go to disk first, then nothing more is sent.
    while (this.#writes.size) await Promise.all(this.#writes);
    this.#closed = true;
    for (const t of this.#timers.values()) this.#o.clock.clearTimeout(t);
    this.#timers.clear();
    this.#abort.abort();
    await Promise.all(this.#sends);
    if (this.#unspooled.size) {
      this.#o.log.error(
        { reports: [...this.#unspooled.keys()] },
        "call reports: undelivered and never spooled, lost",
      );
    }
  }

  #enqueue(reportId: string): void {
    if (this.#attempts.has(reportId)) return;
    this.#attempts.set(reportId, 0);
    this.#due.push(reportId);
    this.#pump();
  }

  #pump(): void {
    while (!this.#closed && this.#inFlight < this.#o.maxInFlight && this.#due.length) {
      const id = this.#due.shift()!;
      this.#inFlight++;
      void track(
        this.#sends,
        this.#attempt(id).finally(() => {
          this.#inFlight--;
          this.#pump();
        }),
      );
    }
  }

  async #attempt(reportId: string): Promise<void> {
    const { spool, log } = this.#o;
    const attempt = (this.#attempts.get(reportId) ?? 0) + 1;
    this.#attempts.set(reportId, attempt);
    let body: Buffer;
    try {
      body = this.#unspooled.get(reportId) ?? (await spool.read(reportId));
    } catch (err) {
      this.#attempts.delete(reportId);
      log.error({ err, reportId }, "call report: cannot read it from the spool; not sent");
      return;
    }
    const sent = await this.#post(reportId, body);
    if (sent.status !== undefined && sent.status >= 200 && sent.status < 300) {
      // Delivered: forgotten even while closing, so the next start does not send it again.
      this.#attempts.delete(reportId);
      this.#unspooled.delete(reportId);
      await spool.remove(reportId).catch((err: unknown) => {
        log.error({ err, reportId }, "call report: delivered, but its spool file could not be removed");
      });
      log.info({ reportId, attempt, status: sent.status }, "call report delivered");
      this.#o.onAttempt?.({ kind: "delivered", reportId, attempt, status: sent.status });
      return;
    }
    if (this.#closed) return;
    if (sent.status !== undefined && permanent(sent.status)) {
      this.#attempts.delete(reportId);
      log.error(
        { reportId, attempt, status: sent.status, answer: sent.answer, file: spool.pathOf(reportId) },
        `call report: the receiver refused it with ${sent.status}; kept in the spool and sent again at the ` +
          "next start (check CALL_REPORT_SECRET and the receiver)",
      );
      this.#o.onAttempt?.({ kind: "rejected", reportId, attempt, status: sent.status });
      return;
    }
    const backoff = retryDelayMs(attempt, this.#o.backoff, this.#o.random);
    const asked = sent.retryAfterMs ?? 0;
    const retryInMs = Math.min(this.#o.backoff.maxMs, Math.max(backoff, asked));
    this.#timers.set(
      reportId,
      this.#o.clock.setTimeout(() => {
        this.#timers.delete(reportId);
        this.#due.push(reportId);
        this.#pump();
      }, retryInMs),
    );
    const why = sent.status !== undefined ? { status: sent.status } : { error: sent.error };
    log.warn({ reportId, attempt, ...why, retryInMs }, "call report not delivered; will retry");
    this.#o.onAttempt?.({ kind: "retry", reportId, attempt, ...why, retryInMs });
  }

  async #post(
    reportId: string,
    body: Buffer,
  ): Promise<{ status?: number; answer?: string; retryAfterMs?: number; error?: string }> {
    const { url, secret, timeoutMs, wallNow } = this.#o;
    const timestamp = String(Math.floor(wallNow() / 1000));
    // The reporter's own stop, followed by a listener taken off after the attempt (AbortSignal.any()
    // on the reporter's lifelong signal would keep a registration per report: abort-link.ts).
    const stop = new AbortController();
    const unlink = followAbort(this.#abort.signal, stop);
    try {
      const res = await fetch(url, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          [TIMESTAMP_HEADER]: timestamp,
          [SIGNATURE_HEADER]: signReport(secret, timestamp, body),
          [REPORT_ID_HEADER]: reportId,
        },
        body,
        redirect: "manual",
        signal: AbortSignal.any([stop.signal, AbortSignal.timeout(timeoutMs)]),
      });
      // Read to the end either way, so the connection can be reused.
      const answer = (await res.text().catch(() => "")).slice(0, 200);
      const after = retryAfterMs(res.headers, wallNow());
      return { status: res.status, answer, ...(after !== undefined ? { retryAfterMs: after } : {}) };
    } catch (err) {
      return { error: describe(err, timeoutMs) };
    } finally {
      unlink();
    }
  }
}

/** A status that says the receiver will not take this body however often it is sent (3xx: redirects are not followed). */
function permanent(status: number): boolean {
  return status >= 300 && status < 500 && status !== 408 && status !== 429;
}

/** Keeps `p` in `set` until it settles. */
function track(set: Set<Promise<void>>, p: Promise<void>): Promise<void> {
  const tracked = p.finally(() => set.delete(tracked));
  set.add(tracked);
  return tracked;
}

function describe(err: unknown, timeoutMs: number): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e.name === "TimeoutError") return `no answer within ${timeoutMs} ms`;
  if (e.name === "AbortError") return "aborted (bridge closing)";
  return e.cause?.code ?? e.cause?.message ?? e.message;
}
