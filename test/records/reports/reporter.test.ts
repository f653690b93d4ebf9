// End-of-call report delivery against a real receiver on 127.0.0.1 (node:http) that checks the
// signature as docs/data.md tells receivers to. Retry waits run on virtual time: each test advances
// the clock by the wait the reporter chose, then awaits the next attempt's outcome; the POSTs are
// real requests over real sockets.
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { VirtualClock } from "../../../src/core/clock.ts";
import { silentLogger } from "../../../src/core/log.ts";
import { type CallEvent, recordFromEvents } from "../../../src/records/call-record.ts";
import { type CallReport, callReport } from "../../../src/records/reports/report.ts";
import { CallReporter } from "../../../src/records/reports/reporter.ts";
import { ReportSpool } from "../../../src/records/reports/spool.ts";
import { freePort } from "../../helpers/free-port.ts";
import { Attempts } from "./attempts.ts";
import { Receiver } from "./receiver.ts";

const SECRET = "test-report-secret-0123456789";

function sampleReport(callId = "CA0123"): CallReport {
  const events: CallEvent[] = [
    {
      type: "call-start",
      at: "2025-01-02T10:00:00.000Z",
      callId,
      transport: "twilio",
      from: "+15550001",
      to: "+15550002",
    },
    { type: "user", at: "2025-01-02T10:00:02.000Z", text: "What are your hours?", source: "speech" },
    {
      type: "assistant",
      at: "2025-01-02T10:00:03.000Z",
      generated: "We are open nine to five, Monday to Friday.",
      heard: "We are open nine to five,",
      interrupted: true,
      toolCalls: [],
      metrics: { asrMs: 40, llmTtftMs: 120, voiceToVoiceMs: 610 },
    },
    {
      type: "call-end",
      at: "2025-01-02T10:00:05.000Z",
      reason: "stop frame",
      outcome: "caller_hangup",
      durationMs: 5000,
    },
  ];
  return callReport(recordFromEvents(events)!, { instance: "bridge-1" })!;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function spoolDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "vb-reports-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function reporter(url: string, dir: string, opts: { secret?: string; timeoutMs?: number } = {}) {
  const clock = new VirtualClock();
  const outcomes = new Attempts();
  const r = new CallReporter({
    url,
    secret: opts.secret ?? SECRET,
    spool: new ReportSpool(dir),
    clock,
    log: silentLogger,
    ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}),
    onAttempt: outcomes.push,
  });
  cleanups.push(() => r.close());
  return { reporter: r, clock, outcomes };
}

async function receiver(port?: number): Promise<Receiver> {
  const r = new Receiver(SECRET, port);
  cleanups.push(() => r.close());
  return r;
}

const spooled = (dir: string) => readdirSync(dir).filter((n) => n.endsWith(".json"));

describe("call report delivery", () => {
  it("waits out a receiver that is down (connection refused) and delivers once it is up, exactly once", async () => {
    const dir = spoolDir();
    const down = await receiver(await freePort());
    const { reporter: r, clock, outcomes } = reporter(down.url, dir);
    const report = sampleReport();

    await r.submit(report);
    // On disk before anything was sent.
    expect(spooled(dir)).toEqual([`${report.reportId}.json`]);
    const first = await outcomes.next();
    expect(first).toMatchObject({ kind: "retry", attempt: 1, error: "ECONNREFUSED" });
    expect(spooled(dir)).toHaveLength(1);
    expect(r.pending).toBe(1);

    await down.listen();
    const arrived = down.next();
    clock.advance(first.kind === "retry" ? first.retryInMs : Number.NaN);
    expect(await outcomes.next()).toMatchObject({ kind: "delivered", attempt: 2, status: 200 });
    const got = await arrived;
    expect(got.verified).toBe(true);
    expect(got.headers["content-type"]).toBe("application/json");
    expect(got.headers["x-voice-bridge-report-id"]).toBe(report.reportId);
    expect(got.headers["x-voice-bridge-signature"]).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(JSON.parse(got.body.toString())).toEqual(report);

    expect(spooled(dir)).toEqual([]);
    expect(r.pending).toBe(0);
    expect(clock.pendingTimers).toBe(0);
    await r.close();
    expect(down.received).toHaveLength(1);
  });

  it("retries 5xx answers with growing, capped waits and the same body and id, until a 2xx", async () => {
    const dir = spoolDir();
    const up = await (await receiver()).listen();
    up.script = [500, 503, 502];
    const { reporter: r, clock, outcomes } = reporter(up.url, dir);
    const report = sampleReport();
    void r.submit(report);

    const waits: number[] = [];
    for (let attempt = 1; attempt <= 3; attempt++) {
      const o = await outcomes.next();
      expect(o).toMatchObject({ kind: "retry", attempt, status: [500, 503, 502][attempt - 1] });
      if (o.kind !== "retry") throw new Error("expected a retry");
      // Doubling from 1 s with jitter in the upper half of each step.
      expect(o.retryInMs).toBeGreaterThanOrEqual(500 * 2 ** (attempt - 1));
      expect(o.retryInMs).toBeLessThanOrEqual(1000 * 2 ** (attempt - 1));
      waits.push(o.retryInMs);
      expect(clock.pendingTimers).toBe(1);
      clock.advance(o.retryInMs);
    }
    expect(await outcomes.next()).toMatchObject({ kind: "delivered", attempt: 4 });
    expect(up.received.map((x) => x.status)).toEqual([500, 503, 502, 200]);
    expect(up.received.every((x) => x.verified)).toBe(true);
    expect(new Set(up.received.map((x) => x.body.toString())).size).toBe(1);
    expect(new Set(up.received.map((x) => x.headers["x-voice-bridge-report-id"]))).toEqual(
      new Set([report.reportId]),
    );
    expect(spooled(dir)).toEqual([]);
  });

  it("waits as long as a 429's Retry-After asks, and treats a timeout as a failure to retry", async () => {
    const up = await (await receiver()).listen();
    up.script = [429];
    up.headers = { "Retry-After": "120" };
    const { reporter: r, clock, outcomes } = reporter(up.url, spoolDir(), { timeoutMs: 200 });
    void r.submit(sampleReport());
    expect(await outcomes.next()).toMatchObject({ kind: "retry", status: 429, retryInMs: 120_000 });
    up.hang = true;
    clock.advance(120_000);
    expect(await outcomes.next()).toMatchObject({
      kind: "retry",
      attempt: 2,
      error: "no answer within 200 ms",
    });
  });

  it("survives a restart: what one reporter spooled while the receiver was down, the next one delivers", async () => {
    const dir = spoolDir();
    const down = await receiver(await freePort());
    const before = reporter(down.url, dir);
    const report = sampleReport();
    await before.reporter.submit(report);
    expect(await before.outcomes.next()).toMatchObject({ kind: "retry", error: "ECONNREFUSED" });
    await before.reporter.close();
    expect(before.clock.pendingTimers).toBe(0);
    expect(spooled(dir)).toEqual([`${report.reportId}.json`]);

    await down.listen();
    const after = reporter(down.url, dir);
    await after.reporter.start();
    expect(await after.outcomes.next()).toMatchObject({
      kind: "delivered",
      reportId: report.reportId,
      attempt: 1,
    });
    expect(down.received).toHaveLength(1);
    expect(down.received[0]!.verified).toBe(true);
    expect(JSON.parse(down.received[0]!.body.toString())).toEqual(report);
    expect(spooled(dir)).toEqual([]);
  });

  it("a receiver with another secret refuses it (401): kept on disk, not retried, sent again at the next start", async () => {
    const dir = spoolDir();
    const up = await (await receiver()).listen();
    const wrong = reporter(up.url, dir, { secret: "not-the-receivers-secret" });
    const report = sampleReport();
    await wrong.reporter.submit(report);
    expect(await wrong.outcomes.next()).toMatchObject({ kind: "rejected", status: 401 });
    expect(up.received).toHaveLength(1);
    expect(up.received[0]!.verified).toBe(false);
    expect(wrong.clock.pendingTimers).toBe(0);
    expect(wrong.reporter.pending).toBe(0);
    expect(existsSync(join(dir, `${report.reportId}.json`))).toBe(true);
    await wrong.reporter.close();

    // The secret fixed and the bridge restarted: delivered.
    const fixed = reporter(up.url, dir);
    await fixed.reporter.start();
    expect(await fixed.outcomes.next()).toMatchObject({ kind: "delivered", reportId: report.reportId });
    expect(up.received.map((x) => x.verified)).toEqual([false, true]);
    expect(spooled(dir)).toEqual([]);
  });

  it("a spool scan skips what is not a report and removes the leftovers of interrupted writes", async () => {
    const dir = spoolDir();
    const spool = new ReportSpool(dir);
    await spool.put("b-report", Buffer.from("{}"));
    writeFileSync(join(dir, ".tmp-0a1b2c-x.json"), "{");
    writeFileSync(join(dir, "notes.txt"), "");
    expect(await spool.pending()).toEqual(["b-report"]);
    expect(readdirSync(dir).sort()).toEqual(["b-report.json", "notes.txt"]);
    expect(() => spool.pathOf("../escape")).toThrow(/not a report id/);
  });
});
