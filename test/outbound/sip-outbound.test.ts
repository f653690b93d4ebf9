// The bridge places real SIP calls through an authenticating proxy (Kamailio: 407, or 401 for
// numbers starting with 9) to real phones: baresip callees that auto-answer (a person saying
// "Hello?" and waiting, a voicemail greeting ending in a beep), one that never answers, and
// SIPp answering 486. Each callee records what it hears: the person hears the agent's greeting,
// the voicemail records the message starting after its beep; busy, no answer and a cancel are
// recorded as such.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bridge, startBridge } from "../../app/bridge/start.ts";
import { parseWav } from "../../codecs/wav.ts";
import { loadConfig } from "../../src/config/config.ts";
import type { CallRecord } from "../../src/records/call-record.ts";
import { until } from "../helpers/agents-fixture.ts";
import { Baresip } from "../helpers/baresip.ts";
import { freePort } from "../helpers/free-port.ts";
import { firstLoudMs } from "../helpers/speech.ts";
import { Receiver } from "../records/reports/receiver.ts";
import { loopbackSipEnv } from "./bridge-env.ts";
import { personWav, quietWav, CALLEE_RATE as RATE, voicemailWav } from "./callees.ts";
import { KamailioTrunk } from "./kamailio-trunk.ts";
import { startBusyCallee } from "./sipp-busy.ts";

const TOKEN = "outbound-test-token-0123456789";

let dir: string;
let bridge: Bridge;
let trunk: KamailioTrunk;
let person: Baresip;
let voicemail: Baresip;
let nobody: Baresip;
let sipp: ChildProcess;
let reports: Receiver;
let trunkPort: number;
/** The bridge's environment (a second bridge reaches the trunk over TCP). */
let env: Record<string, string>;
/** Where the voicemail's beep ends in the audio it plays, ms. */
let beepEndMs: number;
/** Where the person's "Hello?" ends, ms. */
let helloEndMs: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "outbound-"));
  const personPlays = personWav(dir);
  const voicemailPlays = voicemailWav(dir);
  ({ helloEndMs } = personPlays);
  ({ beepEndMs } = voicemailPlays);
  [person, voicemail, nobody] = await Promise.all([
    Baresip.start({
      codec: "pcmu",
      wav: personPlays.file,
      user: "person",
      accountParams: ";answermode=auto",
    }),
    Baresip.start({
      codec: "pcmu",
      wav: voicemailPlays.file,
      user: "voicemail",
      accountParams: ";answermode=auto",
    }),
    Baresip.start({ codec: "pcmu", wav: quietWav(dir), user: "nobody", accountParams: ";answermode=manual" }),
  ]);
  const busy = await startBusyCallee(dir);
  sipp = busy.process;
  const busyPort = busy.port;
  trunkPort = await freePort();
  trunk = await KamailioTrunk.start({
    dir,
    port: trunkPort,
    user: "bridge",
    password: "trunk-secret",
    callees: {
      "1001": { user: "person", port: person.sipPort },
      "9001": { user: "person", port: person.sipPort },
      "1002": { user: "voicemail", port: voicemail.sipPort },
      "1003": { user: "nobody", port: nobody.sipPort },
      "1004": { user: "busy", port: busyPort },
    },
  });
  reports = await new Receiver("outbound-report-secret-0123456789").listen();
  env = {
    CALL_REPORT_URL: reports.url,
    CALL_REPORT_SECRET: reports.secret,
    ...loopbackSipEnv({ token: TOKEN, rtpPorts: "36400-36599", dir }),
    AGENT_GREETING: "Hello {{var.name}}, this is the clinic calling about your appointment.",
    SIP_OUTBOUND_PROXY: `sip:127.0.0.1:${trunkPort}`,
    SIP_OUTBOUND_USER: "bridge",
    SIP_OUTBOUND_PASSWORD: "trunk-secret",
    SIP_OUTBOUND_FROM: "+15550100",
    OUTBOUND_CALLS_PER_SECOND: "20",
  };
  bridge = await startBridge(loadConfig({ env }), pino({ level: process.env.E2E_LOG ?? "silent" }));
}, 90_000);

afterAll(async () => {
  await bridge?.close(0);
  await reports?.close();
  await Promise.all([person?.stop(), voicemail?.stop(), nobody?.stop(), trunk?.stop()]);
  sipp?.kill("SIGKILL");
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// biome-ignore lint/suspicious/noExplicitAny: test reads of JSON answers
type Json = any;

async function api(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Json; headers: Headers }> {
  const res = await fetch(`${bridge.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined, headers: res.headers };
}

async function dial(body: Record<string, unknown>): Promise<string> {
  const r = await api("POST", "/calls", { via: "sip", ...body });
  expect(r.status, JSON.stringify(r.json)).toBe(202);
  return r.json.callId as string;
}

async function ended(callId: string, timeoutMs = 40_000): Promise<CallRecord> {
  return until(
    () => {
      const r = bridge.transcripts.get(callId);
      return r?.endedAt ? r : undefined;
    },
    `the end of ${callId}`,
    timeoutMs,
  );
}

describe("outbound SIP calls through an authenticating proxy", () => {
  it("a person answers: detected as human, hears the greeting soon after their Hello", async () => {
    const callId = await dial({ to: "1001", variables: { name: "Ada" } });
    const record = await until(
      () => {
        const r = bridge.transcripts.get(callId);
        return r?.turns.some((t) => t.role === "assistant") ? r : undefined;
      },
      "the agent's greeting",
      30_000,
    );
    expect(record).toMatchObject({
      direction: "outbound",
      dialOutcome: "human",
      transport: "sip",
      to: "1001",
    });
    expect(record.amd?.result).toBe("human");
    expect(record.turns[0]).toMatchObject({
      role: "assistant",
      generated: "Hello Ada, this is the clinic calling about your appointment.",
    });
    // The greeting's turn is on record once it was heard to its end: the person has it already.
    expect((await api("DELETE", `/calls/${callId}`)).status).toBe(202);
    const done = await ended(callId);
    expect(done.endReason).toMatch(/DELETE/);
    await person.waitFor("CALL_CLOSED");
    // What the person heard: silence while they said Hello, then the agent within ~1.5 s of its end.
    const heard = parseWav(readFileSync(person.dumps().heard!)).samples;
    const agentAt = firstLoudMs(heard, RATE)!;
    expect(agentAt).toBeGreaterThan(helloEndMs);
    expect(agentAt - helloEndMs).toBeLessThan(2500);
    expect(trunk.lines().some((l) => /TRUNK challenge 407 1001/.test(l))).toBe(true);
    expect(trunk.lines().some((l) => /TRUNK INVITE 1001 from \+15550100 authorized as bridge/.test(l))).toBe(
      true,
    );
    person.events.length = 0;
  }, 60_000);

  it("a voicemail answers: the message starts after its beep, then the bridge hangs up", async () => {
    const callId = await dial({
      to: "1002",
      machineDetection: "message",
      voicemailMessage:
        "Hi {{var.name}}, the clinic called about tomorrow's appointment. Please call us back.",
      variables: { name: "Morgan" },
    });
    const record = await ended(callId, 60_000);
    expect(record).toMatchObject({ direction: "outbound", dialOutcome: "machine" });
    expect(record.amd).toMatchObject({ result: "machine", by: "bridge" });
    expect(record.amd?.beepEndedAtMs ?? 0, JSON.stringify(record.events)).toBeGreaterThan(0);
    expect(record.turns).toEqual([
      expect.objectContaining({
        role: "assistant",
        generated: "Hi Morgan, the clinic called about tomorrow's appointment. Please call us back.",
      }),
    ]);
    expect(record.endReason).toMatch(/voicemail message/);
    await voicemail.waitFor("CALL_CLOSED");
    const heard = parseWav(readFileSync(voicemail.dumps().heard!)).samples;
    const messageAt = firstLoudMs(heard, RATE) ?? -1;
    expect(messageAt).toBeGreaterThan(beepEndMs - 100);
    expect(messageAt - beepEndMs).toBeLessThan(1000);
  }, 90_000);

  it("busy (486 from SIPp) and no answer (ring timeout: CANCEL, 487) are recorded as such", async () => {
    const busy = await dial({ to: "1004" });
    const noAnswer = await dial({ to: "1003", ringTimeoutS: 5 });
    const [b, n] = await Promise.all([ended(busy), ended(noAnswer)]);
    expect(b).toMatchObject({ direction: "outbound", dialOutcome: "busy", dialReason: "486 Busy Here" });
    expect(n).toMatchObject({ dialOutcome: "no-answer" });
    expect(n.dialReason).toMatch(/^487 .*ring timeout/);
    expect(trunk.lines().some((l) => /TRUNK CANCEL 1003/.test(l))).toBe(true);
    // Unanswered calls are reported like the rest, signed, with how dialling went.
    const report = await until(
      () => reports.received.map((r) => JSON.parse(r.body.toString())).find((r) => r.callId === busy),
      "the busy call's report",
    );
    expect(report).toMatchObject({ direction: "outbound", dialOutcome: "busy", outcome: "unanswered" });
    const list = await api("GET", "/calls?direction=outbound&outcome=unanswered");
    const ids = (list.json.calls as { callId: string; dialOutcome: string }[]).map((c) => c.callId);
    expect(ids).toEqual(expect.arrayContaining([busy, noAnswer]));
  }, 60_000);

  it("DELETE /calls/:id cancels a ringing call", async () => {
    nobody.events.length = 0;
    const callId = await dial({ to: "1003", ringTimeoutS: 60 });
    await nobody.waitFor("CALL_INCOMING", 20_000);
    const del = await api("DELETE", `/calls/${callId}`);
    expect(del.json).toMatchObject({ action: "canceled" });
    const record = await ended(callId);
    expect(record).toMatchObject({ dialOutcome: "canceled" });
    expect(record.dialReason).toMatch(/^487/);
  }, 60_000);

  it("answers a 401 challenge the same way (numbers starting with 9)", async () => {
    person.events.length = 0;
    const callId = await dial({ to: "9001", machineDetection: "off" });
    const record = await until(
      () => bridge.transcripts.get(callId)?.dialOutcome && bridge.transcripts.get(callId),
      "answer",
    );
    expect(record.dialOutcome).toBe("human");
    expect(trunk.lines().some((l) => /TRUNK challenge 401 9001/.test(l))).toBe(true);
    await api("DELETE", `/calls/${callId}`);
    await ended(callId);
  }, 60_000);

  it("voice-bridge dial places a call with the bridge's token and says how it went", async () => {
    const cli = new URL("../../app/cli.ts", import.meta.url).pathname;
    const child = spawn(process.execPath, [cli, "dial", "1004", "--url", bridge.url, "--token", TOKEN], {
      env: { PATH: process.env.PATH, SVC_LOCAL_DATA_DIR: join(dir, "cli-data") },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(out).toMatch(/placed: out-/);
    expect(out).toMatch(/dial outcome: busy — 486 Busy Here/);
    expect(code).toBe(2);
  }, 60_000);

  it("refuses bad fields with 400 naming them, and asks for the token", async () => {
    expect((await api("POST", "/calls", { to: "not a number", via: "sip" })).json.error.param).toBe("to");
    expect((await api("POST", "/calls", { to: "1001", via: "fax" })).json.error.param).toBe("via");
    expect(
      (await api("POST", "/calls", { to: "1001", via: "sip", ringTimeoutS: 500 })).json.error.param,
    ).toBe("ringTimeoutS");
    expect((await api("POST", "/calls", { to: "1001", via: "sip", agent: "nobody" })).json.error.param).toBe(
      "agent",
    );
    expect((await api("POST", "/calls", { to: "1001", via: "twilio" })).json.error.param).toBe("via");
    const anon = await fetch(`${bridge.url}/calls`, {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json" },
    });
    expect(anon.status).toBe(401);
  });

  it("reaches the proxy over TCP when SIP_OUTBOUND_PROXY says ;transport=tcp", async () => {
    const overTcp = await startBridge(
      loadConfig({
        env: {
          ...env,
          RTP_PORTS: "36700-36799",
          SVC_LOCAL_DATA_DIR: join(dir, "data-tcp"),
          SIP_OUTBOUND_PROXY: `sip:127.0.0.1:${trunkPort};transport=tcp`,
          CALL_REPORT_URL: "",
          CALL_REPORT_SECRET: "",
        },
      }),
      pino({ level: process.env.E2E_LOG ?? "silent" }),
    );
    try {
      person.events.length = 0;
      const res = await fetch(`${overTcp.url}/calls`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ to: "1001", via: "sip", machineDetection: "off" }),
      });
      const { callId } = (await res.json()) as { callId: string };
      const record = await until(
        () => overTcp.transcripts.get(callId)?.dialOutcome && overTcp.transcripts.get(callId),
        "answer",
      );
      expect(record.dialOutcome).toBe("human");
      expect(trunk.lines().some((l) => /TRUNK INVITE 1001 .* over tcp/.test(l))).toBe(true);
      await fetch(`${overTcp.url}/calls/${callId}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      await until(() => overTcp.transcripts.get(callId)?.endedAt, "the end");
      await person.waitFor("CALL_CLOSED");
    } finally {
      await overTcp.close(0);
    }
  }, 60_000);
});
