// Outbound Twilio calls through the `twilio` helper against a fake of Twilio's REST API (its
// published request and callback shapes), which then drives the project's simulated media stream:
// a person answers (Twilio's AnsweredBy human) and hears the greeting; a voicemail
// (machine_end_beep) gets the message; busy, no answer and a cancel come back as status callbacks.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bridge, startBridge } from "../../app/bridge/start.ts";
import { concatPcm } from "../../codecs/pcm.ts";
import { loadConfig } from "../../src/config/config.ts";
import type { CallEvent, CallRecord } from "../../src/records/call-record.ts";
import { until } from "../helpers/agents-fixture.ts";
import { freePort } from "../helpers/free-port.ts";
import { firstLoudMs, silence, speak } from "../helpers/speech.ts";
import { FakeTwilio } from "./fake-twilio.ts";

const ACCOUNT_SID = `AC${"1".repeat(32)}`;
const AUTH_TOKEN = "fake-twilio-auth-token";
const TOKEN = "twilio-outbound-test-token-0123";
const RATE = 8000;

let dir: string;
let bridge: Bridge;
let fake: FakeTwilio;
let vmGreetingMs: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "twilio-out-"));
  const greeting = speak("You have reached Morgan. Please leave a message after the tone.", { rate: RATE });
  vmGreetingMs = (greeting.length / RATE) * 1000;
  fake = new FakeTwilio(ACCOUNT_SID, AUTH_TOKEN, {
    "+15550001": {
      behaviour: "answer",
      audio: concatPcm([silence(400, RATE), speak("Hello?", { rate: RATE }), silence(9000, RATE)]),
      amd: { answeredBy: "human", afterMs: 1500 },
    },
    "+15550002": {
      behaviour: "answer",
      audio: concatPcm([greeting, silence(12000, RATE)]),
      amd: { answeredBy: "machine_end_beep", afterMs: Math.round(vmGreetingMs + 800) },
    },
    // A machine whose verdict comes long after the bridge stops: answered, still being decided.
    "+15550005": {
      behaviour: "answer",
      audio: concatPcm([greeting, silence(20000, RATE)]),
      amd: { answeredBy: "machine_end_beep", afterMs: 30_000 },
    },
    "+15550003": { behaviour: "busy" },
    "+15550004": { behaviour: "no-answer" },
  });
  await fake.start();
  bridge = await twilioBridge("data");
}, 60_000);

/** A bridge dialling through the fake Twilio (`extra` adds to its environment). */
async function twilioBridge(
  data: string,
  extra: Record<string, string> = {},
  log = pino({ level: process.env.E2E_LOG ?? "silent" }),
): Promise<Bridge> {
  const port = await freePort();
  return startBridge(
    loadConfig({
      env: {
        HOST: "127.0.0.1",
        PORT: String(port),
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        BRIDGE_TOKEN: TOKEN,
        SIP_PORT: "off",
        SVC_LOCAL_DATA_DIR: join(dir, data),
        TWILIO_ACCOUNT_SID: ACCOUNT_SID,
        TWILIO_AUTH_TOKEN: AUTH_TOKEN,
        TWILIO_OUTBOUND_FROM: "+15557770000",
        TWILIO_API_BASE: fake.url,
        AGENT_GREETING: "Hello, this is the clinic calling.",
        OUTBOUND_CALLS_PER_SECOND: "20",
        ...extra,
      },
    }),
    log,
  );
}

afterAll(async () => {
  await bridge?.close(0);
  await fake?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function post(body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${bridge.url}/calls`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ via: "twilio", ...body }),
  });
  const json = (await res.json()) as { callId: string };
  expect(res.status, JSON.stringify(json)).toBe(202);
  return json.callId;
}

const record = (callId: string) => bridge.transcripts.get(callId);
const ended = (callId: string, ms = 40_000) =>
  until(
    () => (record(callId)?.endedAt ? record(callId) : undefined),
    `the end of ${callId}`,
    ms,
  ) as Promise<CallRecord>;

describe("outbound Twilio calls", () => {
  it("creates the call as Twilio publishes it; a person answers and hears the greeting after Twilio's verdict", async () => {
    const callId = await post({ to: "+15550001" });
    const r = await until(
      () => (record(callId)?.turns.some((t) => t.role === "assistant") ? record(callId) : undefined),
      "the greeting",
    );
    expect(r).toMatchObject({
      direction: "outbound",
      transport: "twilio",
      dialOutcome: "human",
      to: "+15550001",
    });
    expect(r.amd).toMatchObject({ result: "human", by: "twilio", decidedAfterMs: expect.any(Number) });
    const created = fake.calls.find((c) => c.form.get("To") === "+15550001")!;
    expect(created.form.get("From")).toBe("+15557770000");
    expect(created.form.get("MachineDetection")).toBe("DetectMessageEnd");
    expect(created.form.get("AsyncAmd")).toBe("true");
    expect(created.form.getAll("StatusCallbackEvent")).toEqual([
      "initiated",
      "ringing",
      "answered",
      "completed",
    ]);
    expect(created.form.get("Twiml")).toMatch(
      /<Connect><Stream url="ws:\/\/127\.0\.0\.1:\d+\/twilio\/media">/,
    );
    expect(created.form.get("Twiml")).toContain(`<Parameter name="outboundCallId" value="${callId}"/>`);
    // Every callback was accepted (signed as Twilio signs them).
    expect(created.callbacks.every((c) => c.status === 204)).toBe(true);
    const del = await fetch(`${bridge.url}/calls/${callId}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(del.status).toBe(202);
    const sim = await created.sim!;
    const heard = firstLoudMs(sim.agentAudio, RATE)!;
    // Silent until Twilio said "human" (1.5 s after the answer), then the greeting.
    expect(heard).toBeGreaterThan(1400);
    expect(heard).toBeLessThan(4000);
    await ended(callId);
  }, 60_000);

  it("a voicemail (machine_end_beep) gets the message, then the bridge hangs up", async () => {
    const callId = await post({
      to: "+15550002",
      machineDetection: "message",
      voicemailMessage: "Please call the clinic back.",
    });
    const r = await ended(callId);
    expect(r).toMatchObject({ dialOutcome: "machine", amd: { result: "machine", by: "twilio" } });
    expect(r.turns).toEqual([
      expect.objectContaining({ role: "assistant", generated: "Please call the clinic back." }),
    ]);
    const created = fake.calls.find((c) => c.form.get("To") === "+15550002")!;
    const sim = await created.sim!;
    const heard = firstLoudMs(sim.agentAudio, RATE)!;
    expect(heard).toBeGreaterThan(vmGreetingMs + 700);
  }, 60_000);

  it("busy, no answer and cancel come back as Twilio's status callbacks say", async () => {
    const busy = await post({ to: "+15550003" });
    const noAnswer = await post({ to: "+15550004", ringTimeoutS: 5 });
    const canceled = await post({ to: "+15550004", ringTimeoutS: 60 });
    await until(() => fake.calls.filter((c) => c.form.get("To") === "+15550004").length === 2, "two calls");
    // Canceled while it rings: once the bridge has taken the ringing callback.
    const ringing = fake.calls.find(
      (c) => c.form.get("To") === "+15550004" && c.form.get("Timeout") === "60",
    )!;
    await until(
      () => ringing.callbacks.some((cb) => cb.params.CallStatus === "ringing"),
      "the ringing callback",
    );
    await fetch(`${bridge.url}/calls/${canceled}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const [b, n, c] = await Promise.all([ended(busy), ended(noAnswer), ended(canceled)]);
    expect(b).toMatchObject({ dialOutcome: "busy", dialReason: "Twilio CallStatus busy (SIP 486)" });
    expect(n).toMatchObject({ dialOutcome: "no-answer" });
    expect(c).toMatchObject({ dialOutcome: "canceled" });
    expect(fake.calls.find((x) => x.form.get("To") === "+15550004")!.form.get("Timeout")).toBe("5");
  }, 60_000);

  it("refuses a callback without Twilio's signature", async () => {
    const res = await fetch(`${bridge.url}/twilio/outbound/status?callId=x`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "CallStatus=busy",
    });
    expect(res.status).toBe(403);
  });

  it("a call still deciding who answered when the bridge stops is filed as the bridge's end, not a hang-up", async () => {
    const lines: string[] = [];
    const log = pino({ level: "info" }, { write: (line: string) => void lines.push(line) });
    const own = await twilioBridge("data-shutdown", {}, log);
    const ends: CallEvent[] = [];
    own.transcripts.observe((_id, event) => {
      if (event.type === "call-end") ends.push(event);
    });
    try {
      const res = await fetch(`${own.url}/calls`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ to: "+15550005", via: "twilio", machineDetection: "message" }),
      });
      expect(res.status).toBe(202);
      await until(() => lines.some((l) => l.includes('"outbound: answered"')), "the call to be answered");
    } finally {
      await own.close(0);
    }
    expect(ends).toEqual([
      expect.objectContaining({ outcome: "bridge_shutdown", reason: "bridge shut down" }),
    ]);
  }, 60_000);

  it("with TWILIO_OUTBOUND_AMD=bridge, asks Twilio for no detection and decides on the stream itself", async () => {
    const own = await twilioBridge("data-own-amd", { TWILIO_OUTBOUND_AMD: "bridge" });
    try {
      const res = await fetch(`${own.url}/calls`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ to: "+15550001", via: "twilio" }),
      });
      const { callId } = (await res.json()) as { callId: string };
      const r = await until(
        () => own.transcripts.get(callId)?.dialOutcome && own.transcripts.get(callId),
        "the verdict",
      );
      expect(r.amd).toMatchObject({ result: "human", by: "bridge" });
      const created = fake.calls.filter((c) => c.form.get("To") === "+15550001").at(-1)!;
      expect(created.form.get("MachineDetection")).toBeNull();
      // The person hears the greeting before the call is hung up.
      // (On record once heard to its end: Twilio's marks for all of it have come back.)
      await until(
        () => own.transcripts.get(callId)?.turns.some((t) => t.role === "assistant"),
        "the greeting",
      );
      await fetch(`${own.url}/calls/${callId}`, {
        method: "DELETE",
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      await until(() => own.transcripts.get(callId)?.endedAt, "the end");
    } finally {
      await own.close(0);
    }
  }, 60_000);
});
