// Warm transfer on a Twilio call end to end: the Twilio simulator calls the bridge (signed webhook,
// media stream) and presses 0 for an operator (the local service's scripted agent asks for
// transfer_call, warm); the bridge holds the caller and places the person's call through Twilio's
// REST API — a fake of it following the published shapes, whose answered calls run the same
// simulated media stream — with Twilio's answering-machine detection. The person presses 1 after
// the brief and the bridge has Twilio join both calls in a conference (the fake's, following the
// published TwiML: both streams stop, the calls stay up and hear each other), leaving the call; a
// busy person sends the caller back to the agent. What each side heard is read from the
// simulator's recordings of it.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bridge, startBridge } from "../../app/bridge/start.ts";
import { concatPcm } from "../../codecs/pcm.ts";
import { ToneBank } from "../../codecs/tone.ts";
import { loadConfig } from "../../src/config/config.ts";
import type { CallRecord } from "../../src/records/call-record.ts";
import { newCallSid, type SimResult, simulateCall } from "../../tools/twilio-sim/simulate.ts";
import { freePort } from "../helpers/free-port.ts";
import { silence, speak } from "../helpers/speech.ts";
import { until } from "../helpers/until.ts";
import { FakeTwilio } from "../outbound/fake-twilio.ts";

const ACCOUNT_SID = `AC${"2".repeat(32)}`;
const AUTH_TOKEN = "fake-twilio-warm-auth-token";
const RATE = 8000;
const PERSON = "+15550001";
const BUSY = "+15550003";
/**
 * The person's line after "Hello?", and the caller's: steady tones (neither a DTMF frequency), told
 * apart in the recordings. A tone the caller's line carries from the start is the line's floor to
 * the bridge, not speech: the agent takes no turn for it.
 */
const PERSON_HZ = 1600;
const CALLER_HZ = 1000;
const HOLD_HZ = 440;

let dir: string;
let bridge: Bridge;
let fake: FakeTwilio;

function tone(hz: number, ms: number, amp = 6000): Int16Array {
  const out = new Int16Array((ms * RATE) / 1000);
  for (let i = 0; i < out.length; i++) out[i] = Math.round(amp * Math.sin((2 * Math.PI * hz * i) / RATE));
  return out;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-e2e-twilio-warm-"));
  fake = new FakeTwilio(ACCOUNT_SID, AUTH_TOKEN, {
    [PERSON]: {
      behaviour: "answer",
      audio: concatPcm([
        silence(400, RATE),
        speak("Hello?", { rate: RATE }),
        silence(2000, RATE),
        tone(PERSON_HZ, 45_000),
      ]),
      amd: { answeredBy: "human", afterMs: 0 },
      keysAfterBridge: "1",
      hangUpAfterS: 50,
    },
    // Busy after a second: the caller hears the hold tone (as a tone, not a lone frame) before it.
    [BUSY]: { behaviour: "busy", busyAfterMs: 1000 },
  });
  await fake.start();
  const port = await freePort();
  const env = {
    HOST: "127.0.0.1",
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    BRIDGE_TOKEN: "twilio-warm-transfer-token-0123",
    SIP_PORT: "off",
    SVC_LOCAL_DATA_DIR: join(dir, "data"),
    TWILIO_ACCOUNT_SID: ACCOUNT_SID,
    TWILIO_AUTH_TOKEN: AUTH_TOKEN,
    TWILIO_OUTBOUND_FROM: "+15557770000",
    TWILIO_API_BASE: fake.url,
    AGENT_GREETING: "Hello.",
  };
  // The number the caller dialled is the desk the agent transfers to.
  const overrides = {
    agent: {
      transferTarget: "{{called}}",
      transferMode: "warm",
      transferAnswerSeconds: 5,
      transferBrief: "An order question.",
    },
  };
  bridge = await startBridge(
    loadConfig({ env, overrides }),
    pino({ level: process.env.E2E_LOG ?? "silent" }),
  );
}, 60_000);

afterAll(async () => {
  await bridge?.close(0);
  await fake?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** 20 ms frames of a recording that are a steady tone at `hz` (the project's own tone bank). */
function toneFrames(pcm: Int16Array, hz: number): number[] {
  const bank = new ToneBank(RATE);
  const out: number[] = [];
  for (let at = 0; at + 160 <= pcm.length; at += 160) {
    const t = bank.analyse(pcm.subarray(at, at + 160));
    if (t.rms > 150 && t.purity > 0.8 && Math.abs(t.hz - hz) <= 25) out.push(at / 160);
  }
  return out;
}

/**
 * The runs of consecutive frames among `frames` (indexes, ascending) as [first, last]: a tone lasts,
 * where a lone frame of a voice can be as pure as one (a vowel near its pitch).
 */
function runs(frames: number[], min: number): [number, number][] {
  const out: [number, number][] = [];
  let first = 0;
  for (let i = 1; i <= frames.length; i++) {
    if (i < frames.length && frames[i] === frames[i - 1]! + 1) continue;
    if (i - first >= min) out.push([frames[first]!, frames[i - 1]!]);
    first = i;
  }
  return out;
}

/** 20 ms frames of a recording that are loud but no steady tone: a voice. */
function voiceFrames(pcm: Int16Array): number {
  const bank = new ToneBank(RATE);
  let n = 0;
  for (let at = 0; at + 160 <= pcm.length; at += 160) {
    const t = bank.analyse(pcm.subarray(at, at + 160));
    if (t.rms > 150 && t.purity < 0.8) n++;
  }
  return n;
}

const notes = (r: CallRecord | undefined) =>
  (r?.events ?? []).flatMap((e) => (e.type === "note" ? [e.text] : []));

/** A Twilio call to `number` that presses 0 after the greeting, its line carrying `line` throughout. */
function call(number: string, line?: Int16Array) {
  const callSid = newCallSid();
  let media = 0;
  const sim = simulateCall({
    url: bridge.url,
    authToken: AUTH_TOKEN,
    callSid,
    accountSid: ACCOUNT_SID,
    from: "+15551230000",
    to: number,
    says: [{ keys: "0#" }],
    // The line's tone is no speech to wait on before pressing 0.
    ...(line ? { caller: { samples: line, rate: RATE }, speechThresholdDbfs: 0 } : {}),
    // Twilio's REST API (the fake) may give the call new TwiML; the test hangs it up there too.
    ended: fake.follow(callSid),
    // The test hangs up: the caller waits through the hold however quiet it gets.
    noReplyMs: 60_000,
    hangUpAfterMs: 60_000,
    maxSeconds: 60,
    fetchTranscript: false,
    onAgentMessage: (kind) => {
      if (kind === "media") media++;
    },
  });
  return { callSid, sim, hangUp: () => fake.hangUp(callSid), media: () => media };
}

describe("warm transfer on a Twilio call", () => {
  it("places the person's call through Twilio, briefs them and has Twilio join both in a conference once they press 1", async () => {
    const caller = call(PERSON, tone(CALLER_HZ, 60_000, 3000));
    const record = () => bridge.transcripts.get(caller.callSid);
    const conference = fake.conferences;
    let callerResult: SimResult | undefined;
    try {
      await until(
        () => notes(record()).some((n) => n.includes(`taken by ${PERSON}`)),
        "the person taking the call",
        40_000,
      );
      // A second and a half of each one's line heard by the other in the conference.
      await until(
        () => (conference.seat(caller.callSid)?.audibleFrames ?? 0) >= 75,
        "the person's line at the caller, in the conference",
        15_000,
      );
      const personSid = fake.calls.find((c) => c.form.get("To") === PERSON)!.sid;
      await until(
        () => (conference.seat(personSid)?.audibleFrames ?? 0) >= 75,
        "the caller's line at the person, in the conference",
        15_000,
      );
    } finally {
      caller.hangUp();
      callerResult = await caller.sim;
    }
    const ended = await until(() => (record()?.endedAt ? record() : undefined), "the call's end");
    expect(ended.endReason).toContain(`taken by ${PERSON}`);
    const end = ended.events.find((e) => e.type === "call-end");
    expect(end?.type === "call-end" && end.outcome).toBe("transferred");
    expect(ended.takenBy).toBe(PERSON);
    const leg = ended.warmTransfers?.[0]?.leg;
    expect(ended.warmTransfers?.[0]?.outcome).toBe("joined");
    expect(leg?.joinedAt && leg.endedAt && leg.joinedAt <= leg.endedAt).toBe(true);

    // The person's call as Twilio was asked to place it.
    const placed = fake.calls.find((c) => c.form.get("To") === PERSON)!;
    expect(placed.form.get("From")).toBe("+15557770000");
    expect(placed.form.get("Timeout")).toBe("5");
    expect(placed.form.get("AsyncAmd")).toBe("true");
    expect(placed.form.get("Twiml")).toMatch(
      /<Connect><Stream url="ws:\/\/127\.0\.0\.1:\d+\/twilio\/media">/,
    );
    // Both calls given the same conference, the person's first; nothing else asked of either.
    const moves = fake.updates.filter((u) => u.sid === placed.sid || u.sid === caller.callSid);
    expect(moves.map((u) => u.sid)).toEqual([placed.sid, caller.callSid]);
    const name = moves[0]!.conference?.name;
    expect(name).toContain(caller.callSid);
    for (const u of moves) {
      expect(u.conference).toEqual({ name, startConferenceOnEnter: true, endConferenceOnExit: true });
      expect(u.twiml).toContain(
        `<Response><Dial><Conference startConferenceOnEnter="true" endConferenceOnExit="true" beep="false">${name}</Conference></Dial></Response>`,
      );
    }
    // The bridge's streams stopped with the join; the caller's hang-up ended the conference.
    const person = await placed.sim!;
    expect(callerResult.conference?.name).toBe(name);
    expect(person.conference?.name).toBe(name);
    expect(callerResult.endedBy).toBe("caller");
    expect(person.endedBy).toBe("conference");
    expect(conference.participants(name!)).toEqual([]);

    // The caller: the hold tone from the bridge, then the person's line — only once in the
    // conference, the bridge's stream gone: the bridge relayed none of it.
    const heardByCaller = callerResult.agentAudio;
    const callerJoined = callerResult.conference!.fromMs / 20;
    expect(callerResult.mediaReceivedMs.at(-1)!).toBeLessThanOrEqual(callerResult.conference!.atMs);
    const hold = toneFrames(heardByCaller, HOLD_HZ);
    const personAtCaller = toneFrames(heardByCaller, PERSON_HZ);
    expect(hold.length).toBeGreaterThan(0);
    expect(hold[0]!).toBeLessThan(callerJoined);
    expect(personAtCaller.length).toBeGreaterThanOrEqual(50);
    expect(personAtCaller[0]!).toBeGreaterThanOrEqual(callerJoined);
    // The agent has left: nothing of its voice once the person is on.
    expect(voiceFrames(heardByCaller.subarray(personAtCaller[0]! * 160))).toBeLessThanOrEqual(10);
    // The person: the brief from the bridge, then the caller's line in the conference, never the hold tone.
    const heardByPerson = person.agentAudio;
    const personJoined = person.conference!.fromMs / 20;
    const callerAtPerson = toneFrames(heardByPerson, CALLER_HZ);
    expect(callerAtPerson.length).toBeGreaterThanOrEqual(50);
    expect(callerAtPerson[0]!).toBeGreaterThanOrEqual(personJoined);
    expect(runs(toneFrames(heardByPerson, HOLD_HZ), 5)).toEqual([]);
    expect(voiceFrames(heardByPerson.subarray(0, personJoined * 160))).toBeGreaterThanOrEqual(50);
  }, 60_000);

  it("comes back to the caller when the person is busy", async () => {
    const caller = call(BUSY);
    let heard: Int16Array;
    try {
      const note = await until(
        () =>
          notes(bridge.transcripts.get(caller.callSid)).find((n) =>
            n.startsWith(`warm transfer to ${BUSY} failed`),
          ),
        "the busy",
        20_000,
      );
      expect(note).toContain("(busy)");
      // The hold audio stopped with the failure: what the caller gets next is the agent, a second of it.
      const atFailure = caller.media();
      await until(() => caller.media() - atFailure >= 50, "the agent's words after the busy", 15_000);
      expect(bridge.transcripts.get(caller.callSid)?.endedAt).toBeUndefined();
    } finally {
      caller.hangUp();
      heard = (await caller.sim).agentAudio;
    }
    const lastHold = runs(toneFrames(heard, HOLD_HZ), 5).at(-1)![1];
    expect(voiceFrames(heard.subarray((lastHold + 1) * 160))).toBeGreaterThanOrEqual(25);
  }, 45_000);
});
