// A 200-row campaign over real SIP: the bridge dials through Kamailio (digest auth) to baresip
// people who answer, a baresip voicemail and a baresip phone nobody picks up, and to SIPp callees
// by the dozen (cheap: no media) that answer and hang up at once, are busy (486) or ring until the
// bridge gives up. Calling hours are read on a clock the test holds: on a Saturday nothing is
// dialled; on Monday morning the list is worked through, busy and no-answer retried as the policy
// says, the answered and the voicemail called once, the number on the do-not-call list never (nor
// by POST /calls). What the trunk relayed and what each SIPp callee logged is what the results CSV
// says, row by row, and the console shows the campaign and its calls.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bridge, startBridge } from "../../app/bridge/start.ts";
import { loadConfig } from "../../src/config/config.ts";
import { Baresip } from "../helpers/baresip.ts";
import { launchChromium, openConsole, screenshotDir } from "../helpers/chromium.ts";
import { freePort } from "../helpers/free-port.ts";
import { until } from "../helpers/until.ts";
import { loopbackSipEnv } from "../outbound/bridge-env.ts";
import { personWav, quietWav, voicemailWav } from "../outbound/callees.ts";
import { KamailioTrunk } from "../outbound/kamailio-trunk.ts";
import { SippCallee } from "./sipp-callees.ts";

const TOKEN = "campaign-test-token-0123456789";
const execFileAsync = promisify(execFile);
let dir: string;
let bridge: Bridge;
let trunk: KamailioTrunk;
let phones: Baresip[] = [];
let sipp: { answers: SippCallee; busy: SippCallee; rings: SippCallee };
/** The campaign's calendar: the test moves it; it runs on with real time in between. */
let calendar = Date.parse("2025-01-18T12:00:00Z"); // a Saturday
let calendarSetAt = Date.now();
const campaignTime = () => calendar + (Date.now() - calendarSetAt);

type Kind = "baresip" | "answers" | "busy" | "rings";
interface Row {
  readonly number: string;
  readonly name: string;
  readonly kind: Kind;
  /** What the policy makes of what this callee does, after how many attempts. */
  readonly outcome: string;
  readonly attempts: number;
}
const many = (from: number, n: number, kind: Kind, outcome: string, attempts: number): Row[] =>
  Array.from({ length: n }, (_, i) => ({
    number: String(from + i),
    name: `${kind} ${i}`,
    kind,
    outcome,
    attempts,
  }));
/** The list, dialled in this order: the baresip calls, then those that ring, so the long waits overlap the rest. */
const ROWS: readonly Row[] = [
  { number: "2001", name: "Ada", kind: "baresip", outcome: "answered", attempts: 1 },
  { number: "2005", name: "Busy One", kind: "busy", outcome: "busy", attempts: 2 },
  { number: "2004", name: "Nobody", kind: "baresip", outcome: "no-answer", attempts: 2 },
  { number: "2003", name: "Voicemail", kind: "baresip", outcome: "voicemail", attempts: 1 },
  { number: "2006", name: "Busy Two", kind: "busy", outcome: "busy", attempts: 2 },
  { number: "2002", name: "Bob", kind: "baresip", outcome: "answered", attempts: 1 },
  // On the do-not-call list: taken, and skipped at dial time (an attempt with no call).
  { number: "2007", name: "Never", kind: "busy", outcome: "do-not-call", attempts: 1 },
  ...many(5000, 43, "rings", "no-answer", 2),
  ...many(3000, 80, "answers", "answered", 1),
  ...many(4000, 70, "busy", "busy", 2),
];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "campaign-sip-"));
  const personPlays = personWav(dir).file;
  phones = await Promise.all([
    Baresip.start({ codec: "pcmu", wav: personPlays, user: "ada", accountParams: ";answermode=auto" }),
    Baresip.start({ codec: "pcmu", wav: personPlays, user: "bob", accountParams: ";answermode=auto" }),
    Baresip.start({
      codec: "pcmu",
      wav: voicemailWav(dir).file,
      user: "vm",
      accountParams: ";answermode=auto",
    }),
    Baresip.start({ codec: "pcmu", wav: quietWav(dir), user: "nobody", accountParams: ";answermode=manual" }),
  ]);
  const [ada, bob, vm, nobody] = phones as [Baresip, Baresip, Baresip, Baresip];
  const [answers, busy, rings] = await Promise.all(
    (["answers", "busy", "rings"] as const).map((kind) => SippCallee.start(dir, kind)),
  );
  sipp = { answers: answers!, busy: busy!, rings: rings! };
  const many = Object.fromEntries(
    ROWS.flatMap(({ number, kind }) =>
      kind === "baresip" ? [] : [[number, { user: kind, port: sipp[kind].port }]],
    ),
  );
  const trunkPort = await freePort();
  trunk = await KamailioTrunk.start({
    dir,
    port: trunkPort,
    user: "bridge",
    password: "trunk-secret",
    callees: {
      "2001": { user: "ada", port: ada.sipPort },
      "2002": { user: "bob", port: bob.sipPort },
      "2003": { user: "vm", port: vm.sipPort },
      "2004": { user: "nobody", port: nobody.sipPort },
      // 2005-2007 and 3xxx-5xxx: SIPp (2007 is on the do-not-call list: were it dialled, the
      // trunk would log its INVITE and the busy callee its call).
      ...many,
    },
  });
  const doNotCall = join(dir, "do-not-call.txt");
  writeFileSync(doNotCall, "# numbers the bridge never dials\n2007\n");
  const env = {
    ...loopbackSipEnv({ token: TOKEN, rtpPorts: "38000-38399", dir }),
    AGENT_GREETING: "Hello {{var.name}}, this is the clinic calling.",
    SIP_OUTBOUND_PROXY: `sip:127.0.0.1:${trunkPort}`,
    SIP_OUTBOUND_USER: "bridge",
    SIP_OUTBOUND_PASSWORD: "trunk-secret",
    SIP_OUTBOUND_FROM: "+15550100",
    // Above the campaign's own pace and cap, so that those are what hold it.
    OUTBOUND_CALLS_PER_SECOND: "100",
    OUTBOUND_MAX_CONCURRENT: "120",
    CAMPAIGNS_DO_NOT_CALL_FILE: doNotCall,
  };
  bridge = await startBridge(loadConfig({ env }), pino({ level: process.env.E2E_LOG ?? "silent" }), {
    campaignTime,
  });
}, 90_000);

afterAll(async () => {
  await bridge?.close(0);
  await Promise.all([...phones.map((p) => p.stop()), trunk?.stop()]);
  for (const s of Object.values(sipp ?? {})) s.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// biome-ignore lint/suspicious/noExplicitAny: test reads of JSON answers
type Json = any;

async function api(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Json; text: string }> {
  const res = await fetch(`${bridge.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, json: text.startsWith("{") ? JSON.parse(text) : undefined, text };
}

/** Calls relayed per dialled number, as the trunk logged their INVITEs (a retransmission is the same call). */
function invites(): Record<string, number> {
  const calls = new Map<string, Set<string>>();
  for (const l of trunk.lines()) {
    const m = /TRUNK INVITE (\d+) .* call (\S+)/.exec(l);
    if (m) calls.set(m[1]!, (calls.get(m[1]!) ?? new Set()).add(m[2]!));
  }
  return Object.fromEntries([...calls].map(([number, ids]) => [number, ids.size]));
}

/** The rows of a CSV file (quoted fields, RFC 4180). */
function csvRows(text: string): string[][] {
  const rows: string[][] = [];
  for (const line of text.trim().split("\r\n")) {
    const fields: string[] = [];
    for (const m of line.matchAll(/(?:^|,)(?:"((?:[^"]|"")*)"|([^,]*))/g))
      fields.push(m[1] !== undefined ? m[1].replaceAll('""', '"') : m[2]!);
    rows.push(fields);
  }
  return rows;
}

describe("a campaign over SIP", () => {
  it("refuses a list with no good row, naming each line and field, and creates nothing", async () => {
    const r = await api("POST", "/campaigns", { csv: "number,timezone\n,UTC\n+15550100,Mars/Base\n" });
    expect(r.status).toBe(400);
    expect(r.json.error.problems).toEqual([
      { line: 2, field: "number", message: "missing" },
      { line: 3, field: "timezone", message: expect.stringContaining("Mars/Base") },
    ]);
    expect((await api("GET", "/campaigns")).json.campaigns).toEqual([]);
    expect((await fetch(`${bridge.url}/campaigns`)).status).toBe(401);
  });

  it("refuses POST /calls to a number on the do-not-call list, at dial time", async () => {
    const r = await api("POST", "/calls", { to: "2007", via: "sip" });
    expect(r.status).toBe(403);
    expect(r.json.error).toMatchObject({ type: "do_not_call", param: "to" });
    expect(r.json.error.message).toMatch(/do-not-call/);
    expect(invites()["2007"]).toBeUndefined();
  });

  it("waits for calling hours, then works through 200 rows, retrying busy and no answer as the policy says", async () => {
    const csv = ["number,name", ...ROWS.map((r) => `${r.number},${r.name}`)];
    // A duplicate of Bob's row, as line 8: refused by line, the rest taken.
    csv.splice(7, 0, "2002,Bob again");
    const created = await api("POST", "/campaigns", {
      name: "clinic reminders",
      agent: "default",
      csv: csv.join("\n"),
      timeZone: "Europe/London",
      callingHours: { days: "mon-fri", from: "09:00", to: "17:00" },
      concurrency: 100,
      pacePerMinute: 3000,
      ringTimeoutS: 5,
      machineDetection: "hangup",
      retry: {
        busy: { attempts: 2, delayS: 1 },
        "no-answer": { attempts: 2, delayS: 1 },
        voicemail: { attempts: 1 },
      },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.json.accepted).toBe(200);
    expect(created.json.rejected).toEqual([{ line: 8, field: "number", message: "2002 duplicates line 7" }]);
    const id = created.json.campaign.id as string;

    // Saturday: the scheduler looks, and dials nobody.
    const ticks = bridge.campaigns!.scheduler.ticks;
    await until(() => bridge.campaigns!.scheduler.ticks >= ticks + 3, "three scheduler ticks");
    expect((await api("GET", `/campaigns/${id}`)).json.counts).toMatchObject({
      attempts: 0,
      byStatus: { pending: 200 },
    });
    expect(invites()).toEqual({});

    // Monday 10:00 in London.
    calendar = Date.parse("2025-01-20T10:00:00Z");
    calendarSetAt = Date.now();
    bridge.campaigns!.scheduler.wake();
    const done = await until(
      async () => {
        const c = (await api("GET", `/campaigns/${id}`)).json;
        return c.status === "completed" ? c : undefined;
      },
      "the campaign to complete",
      90_000,
      250,
    );
    // The do-not-call row is taken like the others and skipped at dial time: its attempt has no call.
    const byOutcome: Record<string, number> = {};
    for (const r of ROWS) byOutcome[r.outcome] = (byOutcome[r.outcome] ?? 0) + 1;
    const attempts = ROWS.reduce((n, r) => n + r.attempts, 0);
    expect(done.counts).toEqual({ rows: 200, attempts, byStatus: { done: 199, skipped: 1 }, byOutcome });

    const results = await api("GET", `/campaigns/${id}/results.csv`);
    expect(results.status).toBe(200);
    const lines = csvRows(results.text);
    const header = lines[0]!;
    const col = (name: string) => header.indexOf(name);
    const byNumber = Object.fromEntries(lines.slice(1).map((l) => [l[col("number")], l]));
    // Row by row: the CSV's outcome and attempts are the policy's, each attempt one call of the
    // bridge that reached the trunk once and (SIPp) was logged once by its callee, a call of its own.
    const trunkSaw = invites();
    const calleeSaw = { answers: sipp.answers.calls(), busy: sipp.busy.calls(), rings: sipp.rings.calls() };
    const seen: Record<string, unknown> = {};
    const expected: Record<string, unknown> = {};
    for (const r of ROWS) {
      const row = byNumber[r.number]!;
      const placed = r.outcome === "do-not-call" ? 0 : r.attempts;
      expected[r.number] = {
        status: placed ? "done" : "skipped",
        outcome: r.outcome,
        attempts: String(r.attempts),
        var: r.name,
        calls: placed,
        trunk: placed || undefined,
        callee: r.kind === "baresip" ? "-" : placed || undefined,
      };
      const callIds = row[col("call_ids")] ? row[col("call_ids")]!.split(" ") : [];
      seen[r.number] = {
        status: row[col("status")],
        outcome: row[col("outcome")],
        attempts: row[col("attempts")],
        var: row[col("var.name")],
        calls: new Set(callIds).size,
        trunk: trunkSaw[r.number],
        callee: r.kind === "baresip" ? "-" : calleeSaw[r.kind][r.number],
      };
      // The last call id is a call record of the bridge, dialled to that number.
      if (placed) {
        const record = await api("GET", `/calls/${callIds.at(-1)}`);
        expect(record.json, r.number).toMatchObject({ direction: "outbound", to: r.number });
      }
    }
    expect(seen).toEqual(expected);
    // Each retry waited its delay (1 s) from the end of the attempt before, on the campaign's clock.
    const { calls: tried } = (await api("GET", `/campaigns/${id}/calls?limit=500`)).json as {
      calls: { number: string; attempt: number; startedAt: string; endedAt?: string }[];
    };
    expect(tried).toHaveLength(attempts);
    const ended = new Map(tried.map((a) => [`${a.number}#${a.attempt}`, Date.parse(a.endedAt!)]));
    const waits = tried
      .filter((a) => a.attempt > 1)
      .map((a) => Date.parse(a.startedAt) - ended.get(`${a.number}#${a.attempt - 1}`)!);
    expect(waits).toHaveLength(ROWS.filter((r) => r.attempts > 1).length);
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(1000);
    // The person heard the agent: the call's record has the greeting with their name.
    const ada = await api("GET", `/calls/${byNumber["2001"]![col("call_ids")]}`);
    expect(ada.json.turns[0]).toMatchObject({
      role: "assistant",
      generated: "Hello Ada, this is the clinic calling.",
    });

    // The CLI reads the same: the campaign's counts, and the results file as the HTTP API gives it.
    const cli = (...args: string[]) =>
      execFileAsync(
        process.execPath,
        ["app/cli.ts", "campaign", ...args, "--url", bridge.url, "--token", TOKEN],
        {
          env: { ...process.env, SVC_LOCAL_DATA_DIR: join(dir, "cli") },
        },
      );
    const shown = await cli("show", id);
    expect(shown.stdout).toMatch(/\[completed\]/);
    expect(shown.stdout).toMatch(new RegExp(`answered ${byOutcome.answered}`));
    const out = join(dir, "results.csv");
    await cli("results", id, "-o", out);
    expect(readFileSync(out, "utf8")).toBe(results.text);

    // The console: the campaign, finished, and in its fold (closed at first) its latest 50 calls,
    // newest first; one opens that call's record.
    const browser = await launchChromium();
    try {
      const { page, errors } = await openConsole(browser, bridge.entrances.console!);
      const item = page.locator(`#campaign-list li.campaign[data-campaign-id="${id}"]`);
      await expect.poll(() => item.getAttribute("data-status")).toBe("completed");
      expect(await item.locator(":scope > .line").textContent()).toBe(
        `200/200 · 199 done · 1 skipped · ${attempts} calls`,
      );
      expect(await item.locator("details").getAttribute("open")).toBeNull();
      await item.locator("summary").click();
      const calls = item.locator(".campaign-call");
      await expect.poll(() => calls.count()).toBe(50);
      const newest = item.locator(".campaign-call:not(.unplaced)").first();
      const callId = await newest.getAttribute("data-call-id");
      const number = (await newest.locator(".from").textContent())!.replace("→ ", "");
      expect(await newest.locator(".line").textContent()).toMatch(
        new RegExp(`${byNumber[number]![col("outcome")]}$`),
      );
      await newest.click();
      await expect.poll(() => page.locator("#call-head .call-id").textContent()).toBe(callId);
      expect(await page.locator("#call-head .parties").textContent()).toContain(`→ ${number}`);
      await item.locator(":scope > .row").scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(screenshotDir(), "campaign.png") });
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 150_000);
});
