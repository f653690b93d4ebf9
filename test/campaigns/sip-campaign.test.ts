// A small campaign over real SIP: the bridge dials through Kamailio (digest auth) to baresip people
// who answer, a baresip voicemail, baresip phones nobody picks up and SIPp answering 486. Calling
// hours are read on a clock the test holds: on a Saturday nothing is dialled; on Monday morning
// the list is worked through, busy and no-answer retried as the policy says, the person and the
// voicemail called once, the number on the do-not-call list never (nor by POST /calls). What the
// trunk relayed is what the results CSV says, and the console shows the campaign and its calls.
import type { ChildProcess } from "node:child_process";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bridge, startBridge } from "../../app/bridge/start.ts";
import { loadConfig } from "../../src/config/config.ts";
import { freePort } from "../bridges/sip/sipp.ts";
import { Baresip } from "../helpers/baresip.ts";
import { launchChromium, openConsole, screenshotDir } from "../helpers/chromium.ts";
import { until } from "../helpers/until.ts";
import { loopbackSipEnv } from "../outbound/bridge-env.ts";
import { personWav, quietWav, voicemailWav } from "../outbound/callees.ts";
import { KamailioTrunk } from "../outbound/kamailio-trunk.ts";
import { startBusyCallee } from "../outbound/sipp-busy.ts";

const TOKEN = "campaign-test-token-0123456789";
const execFileAsync = promisify(execFile);
let dir: string;
let bridge: Bridge;
let trunk: KamailioTrunk;
let phones: Baresip[] = [];
let sipp: ChildProcess;
/** The campaign's calendar: the test moves it; it runs on with real time in between. */
let calendar = Date.parse("2025-01-18T12:00:00Z"); // a Saturday
let calendarSetAt = Date.now();
const campaignTime = () => calendar + (Date.now() - calendarSetAt);

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
  const busy = await startBusyCallee(dir);
  sipp = busy.process;
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
      "2005": { user: "busy", port: busy.port },
      "2006": { user: "busy", port: busy.port },
      // On the do-not-call list: were it dialled, the trunk would log its INVITE.
      "2007": { user: "busy", port: busy.port },
    },
  });
  const doNotCall = join(dir, "do-not-call.txt");
  writeFileSync(doNotCall, "# numbers the bridge never dials\n2007\n");
  const env = {
    ...loopbackSipEnv({ token: TOKEN, rtpPorts: "36600-36799", dir }),
    AGENT_GREETING: "Hello {{var.name}}, this is the clinic calling.",
    SIP_OUTBOUND_PROXY: `sip:127.0.0.1:${trunkPort}`,
    SIP_OUTBOUND_USER: "bridge",
    SIP_OUTBOUND_PASSWORD: "trunk-secret",
    SIP_OUTBOUND_FROM: "+15550100",
    OUTBOUND_CALLS_PER_SECOND: "20",
    CAMPAIGNS_DO_NOT_CALL_FILE: doNotCall,
  };
  bridge = await startBridge(loadConfig({ env }), pino({ level: process.env.E2E_LOG ?? "silent" }), {
    campaignTime,
  });
}, 90_000);

afterAll(async () => {
  await bridge?.close(0);
  await Promise.all([...phones.map((p) => p.stop()), trunk?.stop()]);
  sipp?.kill("SIGKILL");
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

/** Relayed INVITEs per dialled number, as the trunk logged them. */
function invites(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of trunk.lines()) {
    const m = /TRUNK INVITE (\d+) /.exec(l);
    if (m) out[m[1]!] = (out[m[1]!] ?? 0) + 1;
  }
  return out;
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

  it("waits for calling hours, then calls each row, retrying busy and no answer as the policy says", async () => {
    const csv = [
      "number,name",
      "2001,Ada",
      "2005,Busy One",
      "2004,Nobody",
      "2003,Voicemail",
      "2006,Busy Two",
      "2002,Bob",
      "2002,Bob again",
      "2007,Never",
    ].join("\n");
    const created = await api("POST", "/campaigns", {
      name: "clinic reminders",
      agent: "default",
      csv,
      timeZone: "Europe/London",
      callingHours: { days: "mon-fri", from: "09:00", to: "17:00" },
      concurrency: 4,
      pacePerMinute: 600,
      ringTimeoutS: 5,
      machineDetection: "hangup",
      retry: {
        busy: { attempts: 2, delayS: 1 },
        "no-answer": { attempts: 2, delayS: 1 },
        voicemail: { attempts: 1 },
      },
    });
    expect(created.status, created.text).toBe(201);
    expect(created.json.accepted).toBe(7);
    expect(created.json.rejected).toEqual([{ line: 8, field: "number", message: "2002 duplicates line 7" }]);
    const id = created.json.campaign.id as string;

    // Saturday: the scheduler looks, and dials nobody.
    const ticks = bridge.campaigns!.scheduler.ticks;
    await until(() => bridge.campaigns!.scheduler.ticks >= ticks + 3, "three scheduler ticks");
    expect((await api("GET", `/campaigns/${id}`)).json.counts).toMatchObject({
      attempts: 0,
      byStatus: { pending: 7 },
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
    expect(done.counts).toEqual({
      rows: 7,
      attempts: 10,
      byStatus: { done: 6, skipped: 1 },
      byOutcome: { answered: 2, busy: 2, "no-answer": 1, voicemail: 1, "do-not-call": 1 },
    });

    const results = await api("GET", `/campaigns/${id}/results.csv`);
    expect(results.status).toBe(200);
    const lines = results.text
      .trim()
      .split("\r\n")
      .map((l) => l.split(","));
    const header = lines[0]!;
    const col = (name: string) => header.indexOf(name);
    const byNumber = Object.fromEntries(lines.slice(1).map((l) => [l[col("number")], l]));
    const seen = invites();
    for (const [number, outcome, attempts] of [
      ["2001", "answered", "1"],
      ["2002", "answered", "1"],
      ["2003", "voicemail", "1"],
      ["2004", "no-answer", "2"],
      ["2005", "busy", "2"],
      ["2006", "busy", "2"],
    ] as const) {
      const row = byNumber[number]!;
      expect([row[col("outcome")], row[col("attempts")], row[col("status")]], number).toEqual([
        outcome,
        attempts,
        "done",
      ]);
      // Each attempt reached the callee through the trunk exactly once.
      expect(seen[number], number).toBe(Number(attempts));
      const callIds = row[col("call_ids")]!.split(" ");
      expect(callIds).toHaveLength(Number(attempts));
      // Each call id is a call record of the bridge, dialled to that number.
      const record = await api("GET", `/calls/${callIds.at(-1)}`);
      expect(record.json).toMatchObject({ direction: "outbound", to: number });
    }
    expect([byNumber["2007"]![col("status")], byNumber["2007"]![col("call_ids")]]).toEqual(["skipped", ""]);
    expect(seen["2007"]).toBeUndefined();
    expect(byNumber["2001"]![col("var.name")]).toBe("Ada");
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
    expect(shown.stdout).toMatch(/answered 2/);
    const out = join(dir, "results.csv");
    await cli("results", id, "-o", out);
    expect(readFileSync(out, "utf8")).toBe(results.text);

    // The console: the campaign, finished, and in its fold (closed at first) its calls, newest first;
    // one opens that call's record.
    const browser = await launchChromium();
    try {
      const { page, errors } = await openConsole(browser, bridge.entrances.console!);
      const item = page.locator(`#campaign-list li.campaign[data-campaign-id="${id}"]`);
      await expect.poll(() => item.getAttribute("data-status")).toBe("completed");
      expect(await item.locator(":scope > .line").textContent()).toMatch(
        /^7\/7 · 6 done · 1 skipped · 10 calls$/,
      );
      expect(await item.locator("details").getAttribute("open")).toBeNull();
      await item.locator("summary").click();
      const calls = item.locator(".campaign-call");
      await expect.poll(() => calls.count()).toBe(10);
      const toAda = calls.filter({ hasText: "→ 2001" });
      expect(await toAda.locator(".line").textContent()).toMatch(/answered$/);
      await toAda.click();
      await expect
        .poll(() => page.locator("#call-head .call-id").textContent())
        .toBe(byNumber["2001"]![col("call_ids")]);
      expect(await page.locator("#call-head .parties").textContent()).toContain("→ 2001");
      await item.locator(":scope > .row").scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(screenshotDir(), "campaign.png") });
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 150_000);
});
