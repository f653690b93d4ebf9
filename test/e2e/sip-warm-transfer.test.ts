// Warm transfer on SIP end to end: a real phone (baresip) calls the bridge and presses 0 for an
// operator (the local service's scripted agent asks for transfer_call); the bridge holds the
// caller, calls the person through Kamailio as an authenticating trunk (with the outbound caller
// id), briefs them and joins the two when they press 1. Other persons: SIPp answering 486 Busy,
// a baresip that never answers. Each check reads what the parties heard (baresip's recordings).
// The person accepts with the keypad here: baresip plays a fixed file, which cannot wait for the
// brief to end. A spoken "yes" and "no" at 8 kHz, through the real detector and recognizer, are in
// test/session/warm-transfer-answer.test.ts.
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bridge, startBridge } from "../../app/bridge/start.ts";
import { concatPcm } from "../../codecs/pcm.ts";
import { toneShare as toneShareAt } from "../../codecs/tone.ts";
import { encodeWav } from "../../codecs/wav.ts";
import { loadConfig } from "../../src/config/config.ts";
import type { CallRecord } from "../../src/records/call-record.ts";
import { Baresip } from "../helpers/baresip.ts";
import { freePort } from "../helpers/free-port.ts";
import { silence, speak } from "../helpers/speech.ts";
import { until } from "../helpers/until.ts";
import { loopbackSipEnv } from "../outbound/bridge-env.ts";
import { voicemailWav } from "../outbound/callees.ts";
import { KamailioTrunk } from "../outbound/kamailio-trunk.ts";
import { startBusyCallee } from "../outbound/sipp-busy.ts";

const RATE = 8000;
/** The person's line after "Hello?": a steady 1200 Hz tone, so the caller can be checked for it. */
const PERSON_HZ = 1200;
const HOLD_HZ = 440;

let dir: string;
let bridge: Bridge;
let trunk: KamailioTrunk;
let person: Baresip;
let nobody: Baresip;
let voicemail: Baresip;
let sipp: ChildProcess;
const logLines: string[] = [];
const taken: string[] = [];

function tone(hz: number, ms: number, amp = 6000): Int16Array {
  const out = new Int16Array((ms * RATE) / 1000);
  for (let i = 0; i < out.length; i++) out[i] = Math.round(amp * Math.sin((2 * Math.PI * hz * i) / RATE));
  return out;
}

function wav(name: string, pcm: Int16Array): string {
  const file = join(mkdtempSync(join(dir, `${name}-`)), "in.wav");
  writeFileSync(file, encodeWav(pcm, RATE));
  return file;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-e2e-warm-"));
  // The person: "Hello?" (answering-machine detection hears a person), then their line's tone.
  const personPlays = wav(
    "person",
    concatPcm([
      silence(300, RATE),
      speak("Hello?", { rate: RATE }),
      silence(2500, RATE),
      tone(PERSON_HZ, 40_000),
    ]),
  );
  [person, nobody, voicemail] = await Promise.all([
    Baresip.start({ codec: "pcmu", wav: personPlays, user: "person", accountParams: ";answermode=auto" }),
    Baresip.start({
      codec: "pcmu",
      wav: wav("quiet", silence(30_000, RATE)),
      user: "nobody",
      accountParams: ";answermode=manual",
    }),
    Baresip.start({
      codec: "pcmu",
      wav: voicemailWav(mkdtempSync(join(dir, "voicemail-"))).file,
      user: "voicemail",
      accountParams: ";answermode=auto",
    }),
  ]);
  const busy = await startBusyCallee(dir);
  sipp = busy.process;
  const trunkPort = await freePort();
  trunk = await KamailioTrunk.start({
    dir,
    port: trunkPort,
    user: "bridge",
    password: "trunk-secret",
    callees: {
      "2001": { user: "person", port: person.sipPort },
      "2002": { user: "busy", port: busy.port },
      "2003": { user: "nobody", port: nobody.sipPort },
      "2004": { user: "voicemail", port: voicemail.sipPort },
    },
  });
  const env = {
    ...loopbackSipEnv({ token: "warm-transfer-token-0123456789", rtpPorts: "36600-36799", dir }),
    AGENT_GREETING: "Thanks for calling. How can I help?",
    SIP_OUTBOUND_PROXY: `sip:127.0.0.1:${trunkPort}`,
    SIP_OUTBOUND_USER: "bridge",
    SIP_OUTBOUND_PASSWORD: "trunk-secret",
    SIP_OUTBOUND_FROM: "+15550100",
  };
  // The number the caller dialled is the desk the agent transfers to: one bridge, three persons.
  const overrides = {
    agent: {
      transferTarget: "{{called}}",
      transferMode: "warm",
      transferHoldLine: "One moment please.",
      transferAnswerSeconds: 5,
    },
  };
  const log = pino({ level: "info" }, { write: (line: string) => void logLines.push(line) });
  bridge = await startBridge(loadConfig({ env, overrides }), log);
  bridge.transcripts.observe((callId, event) => {
    if (event.type === "call-start") taken.push(callId);
  });
}, 90_000);

afterAll(async () => {
  await bridge?.close(0);
  await Promise.all([person?.stop(), nobody?.stop(), voicemail?.stop(), trunk?.stop()]);
  sipp?.kill("SIGKILL");
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const toneShare = (pcm: Int16Array, hz: number) => toneShareAt(pcm, hz, RATE);

type Heard = "silence" | "hold" | "person" | "voice";

/**
 * A recording's samples, also while baresip still writes it (its header's sizes are filled in at
 * the end: until then, everything after the data chunk's header is taken).
 */
function samplesOf(file: string): Int16Array {
  const bytes = readFileSync(file);
  const data = bytes.indexOf("data");
  if (data < 0) return new Int16Array(0);
  const body = bytes.subarray(data + 8);
  return new Int16Array(
    body.buffer.slice(body.byteOffset, body.byteOffset + body.length - (body.length % 2)),
  );
}

/** What each 100 ms of a recording was: quiet, the hold tone, the person's tone, or a voice. */
function heardOf(file: string): Heard[] {
  const pcm = samplesOf(file);
  const out: Heard[] = [];
  for (let at = 0; at + 800 <= pcm.length; at += 800) {
    const w = pcm.subarray(at, at + 800);
    let sum = 0;
    for (const v of w) sum += v * v;
    const rms = Math.sqrt(sum / w.length);
    if (rms < 150) out.push("silence");
    else if (toneShare(w, HOLD_HZ) > 0.8) out.push("hold");
    else if (toneShare(w, PERSON_HZ) > 0.8) out.push("person");
    else out.push("voice");
  }
  return out;
}

/** Calls the bridge at `number`, waits for the greeting, presses 0 for an operator. */
async function callAndAskForOperator(
  number: string,
  seconds: number,
): Promise<{ phone: Baresip; callId: string }> {
  const before = new Set(taken);
  const phone = await Baresip.start({ codec: "pcmu", wav: wav("caller", silence(seconds * 1000, RATE)) });
  phone.dial(`sip:${number}@127.0.0.1:${bridge.sip!.udpPort}`);
  await phone.waitFor("CALL_ESTABLISHED");
  const callId = await until(() => taken.find((id) => !before.has(id)), "the call's record", 10_000);
  await until(
    () => bridge.transcripts.get(callId)?.turns.some((t) => t.role === "assistant"),
    "the greeting",
    15_000,
  );
  phone.sendDigits("0#");
  return { phone, callId };
}

const notes = (r: CallRecord | undefined) =>
  (r?.events ?? []).flatMap((e) => (e.type === "note" ? [e.text] : []));
const logged = (msg: string) => logLines.some((l) => (JSON.parse(l) as { msg?: string }).msg === msg);

describe("warm transfer over SIP", () => {
  it("holds the caller, briefs the person, and joins them when the person presses 1", async () => {
    const { phone, callId } = await callAndAskForOperator("2001", 40);
    try {
      await person.waitFor("CALL_ESTABLISHED", 20_000);
      await until(
        () => logged("warm transfer: the brief was heard; waiting for the person's key"),
        "the brief",
        20_000,
      );
      person.sendDigits("1");
      await until(
        () => notes(bridge.transcripts.get(callId)).some((n) => n.includes("taken by 2001")),
        "the join",
        10_000,
      );
      // The person's line reaches the caller (half a second of it), then the person hangs up.
      await until(
        () => phone.dumps().heard && heardOf(phone.dumps().heard!).filter((h) => h === "person").length >= 5,
        "the person's line at the caller",
        10_000,
      );
      person.hangUp();
      await phone.waitFor("CALL_CLOSED", 10_000);
      const record = await until(() => {
        const r = bridge.transcripts.get(callId);
        return r?.endedAt ? r : undefined;
      }, "the call's end");
      const end = record.events.find((e) => e.type === "call-end");
      expect(end?.type === "call-end" && end.outcome).toBe("transferred");
      expect(record.endReason).toContain("taken by 2001");
      expect(
        trunk.lines().some((l) => /TRUNK INVITE 2001 from \+15550100 authorized as bridge/.test(l)),
      ).toBe(true);
    } finally {
      await phone.stop();
    }
    await person.waitFor("CALL_CLOSED");
    // The caller: the agent, then the hold tone, then the person's line (and no agent after the join).
    const caller = heardOf(phone.dumps().heard!);
    const firstHold = caller.indexOf("hold");
    const firstPerson = caller.indexOf("person");
    expect(firstHold).toBeGreaterThan(caller.indexOf("voice"));
    expect(firstPerson).toBeGreaterThan(firstHold);
    expect(caller.slice(firstPerson).filter((h) => h === "person").length).toBeGreaterThanOrEqual(5);
    expect(caller.slice(firstPerson).filter((h) => h === "voice").length).toBeLessThanOrEqual(2);
    // The person: the brief (a voice) before anything of the caller's line.
    const heard = heardOf(person.dumps().heard!);
    expect(heard.filter((h) => h === "voice").length).toBeGreaterThanOrEqual(20);
  }, 60_000);

  it("comes back to the caller when the person is busy", async () => {
    const { phone, callId } = await callAndAskForOperator("2002", 25);
    try {
      const system = await until(
        () => notes(bridge.transcripts.get(callId)).find((n) => n.startsWith("warm transfer to 2002 failed")),
        "the busy",
        15_000,
      );
      expect(system).toContain("(busy)");
      // The agent speaks again after the failure.
      const agentTurns = () =>
        bridge.transcripts.get(callId)?.turns.filter((t) => t.role === "assistant").length ?? 0;
      const turns = agentTurns();
      await until(() => agentTurns() > turns || undefined, "the agent's words after the busy", 15_000);
      expect(bridge.transcripts.get(callId)?.endedAt).toBeUndefined();
    } finally {
      phone.hangUp();
      await phone.waitFor("CALL_CLOSED", 10_000).catch(() => undefined);
      await phone.stop();
    }
  }, 45_000);

  it("gives up on a person who does not answer: the caller hears the hold tone, then the agent again", async () => {
    const { phone, callId } = await callAndAskForOperator("2003", 30);
    try {
      await until(
        () =>
          notes(bridge.transcripts.get(callId)).find((n) =>
            n.startsWith("warm transfer to 2003 failed (no-answer)"),
          ),
        "the ring timeout",
        20_000,
      );
      const agentTurns = () =>
        bridge.transcripts.get(callId)?.turns.filter((t) => t.role === "assistant").length ?? 0;
      const turns = agentTurns();
      await until(() => agentTurns() > turns || undefined, "the agent's words after no answer", 15_000);
      phone.hangUp();
      await phone.waitFor("CALL_CLOSED", 10_000);
    } finally {
      await phone.stop();
    }
    const caller = heardOf(phone.dumps().heard!);
    const holds = caller.flatMap((h, i) => (h === "hold" ? [i] : []));
    // About five seconds of ringing: the tone plays 0.4 s in every 2 s.
    expect(holds.length).toBeGreaterThanOrEqual(6);
    const lastHold = holds.at(-1)!;
    expect(caller.slice(lastHold).filter((h) => h === "voice").length).toBeGreaterThanOrEqual(10);
  }, 45_000);

  it("takes the call back when a voicemail answers", async () => {
    const { phone, callId } = await callAndAskForOperator("2004", 30);
    try {
      await until(
        () =>
          notes(bridge.transcripts.get(callId)).find((n) =>
            n.startsWith("warm transfer to 2004 failed (voicemail)"),
          ),
        "the voicemail's verdict",
        20_000,
      );
      const agentTurns = () =>
        bridge.transcripts.get(callId)?.turns.filter((t) => t.role === "assistant").length ?? 0;
      const turns = agentTurns();
      await until(() => agentTurns() > turns || undefined, "the agent's words after the voicemail", 15_000);
      expect(bridge.transcripts.get(callId)?.endedAt).toBeUndefined();
    } finally {
      phone.hangUp();
      await phone.waitFor("CALL_CLOSED", 10_000).catch(() => undefined);
      await phone.stop();
    }
    await voicemail.waitFor("CALL_CLOSED", 10_000);
  }, 45_000);
});
