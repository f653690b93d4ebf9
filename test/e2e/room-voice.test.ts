// A caller with someone talking behind them, through the real bridge, the real local service and
// the Twilio simulator: another voice reads a paragraph 16 dB below the caller for the whole call.
// The voice detector hears speech all along; the caller's turn must still end with their own voice
// and the agent answer it, and the background must neither stop the greeting nor make turns.
// The room's sound as the call connects is learned as the room's, but a pop as the line opens is
// not: a caller in a café who cuts into the greeting right after one is heard. A talker who begins
// after the call connected, before the caller spoke, is told from the caller by how loud the line's
// callers usually are.
// Nothing is asserted about the words (the embedded recognizer gets most of them wrong).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bridge } from "../../app/bridge/start.ts";
import { background } from "../../bench/lib/turns-backgrounds.ts";
import type { CallRecord, TurnView } from "../../src/records/call-record.ts";
import { simulateCall } from "../../tools/twilio-sim/simulate.ts";
import { noise } from "../helpers/noise.ts";
import { mixPcm, silence, speak } from "../helpers/speech.ts";
import {
  TWILIO_TEST_AUTH_TOKEN as AUTH_TOKEN,
  startTwilioTestBridge,
  twilioTestConfig,
} from "../helpers/twilio-bridge.ts";

const RATE = 8000;
const ROOM_TEXT =
  "The council met on Thursday to discuss the new parking rules for the town centre. Several shop " +
  "owners said the changes would keep customers away, while residents asked for more space for " +
  "buses and bicycles. A final decision is expected after the summer, once the traffic survey has " +
  "been published and everyone has had a chance to comment on it.";

/** RMS of the 20 ms frames louder than -50 dBFS: a voice's level while it sounds, dBFS. */
function speechLevelDb(pcm: Int16Array): number {
  let sum = 0;
  let n = 0;
  for (let s = 0; s + 160 <= pcm.length; s += 160) {
    let e = 0;
    for (let i = s; i < s + 160; i++) e += pcm[i]! * pcm[i]!;
    if (e / 160 > (32768 * 10 ** (-50 / 20)) ** 2) {
      sum += e;
      n += 160;
    }
  }
  return 10 * Math.log10(sum / Math.max(1, n) / 32768 ** 2);
}

/** `pcm` `db` dB louder (or quieter). */
const gain = (pcm: Int16Array, db: number) => pcm.map((v) => Math.round(v * 10 ** (db / 20)));

/** The room reads on from before the call to its end; the caller asks at 4.5 s, then listens. */
function callerWithRoom(): Int16Array {
  const caller = speak("Where are you located?", { rate: RATE, voice: "en-us", wpm: 165 });
  let room = speak(ROOM_TEXT, { rate: RATE, voice: "en-gb+f4", wpm: 150 });
  while (room.length < 18 * RATE) room = Int16Array.from([...room, ...silence(700, RATE), ...room]);
  room = gain(room, speechLevelDb(caller) - 16 - speechLevelDb(room)).subarray(0, 18 * RATE);
  return mixPcm(room, caller, 4.5 * RATE);
}

/** The caller says "Hello?" as the call connects, listens to the greeting, and asks at 4.5 s. */
function callerSaysHelloFirst(): Int16Array {
  const hello = speak("Hello?", { rate: RATE, voice: "en-us", wpm: 165 });
  const asked = speak("Where are you located?", { rate: RATE, voice: "en-us", wpm: 165 });
  return mixPcm(mixPcm(noise(9000, RATE, { dbfs: -60, seed: 5 }), hello, 0), asked, 4.5 * RATE);
}

/**
 * In a café (its voices and clatter 10 dB under the caller), the line opens with a pop (8 ms of
 * noise 6 dB under full scale, as a line's answer can click); the caller cuts into the greeting at
 * 1.2 s.
 */
function popThenInterruption(): Int16Array {
  const asked = speak("Sorry, where are you located?", { rate: RATE, voice: "en-us", wpm: 165 });
  const cafe = background({ kind: "cafe", belowDb: 0 }, 9000, 4);
  const k = 32768 * 10 ** ((speechLevelDb(asked) - 10) / 20);
  const room = Int16Array.from(cafe, (v) => Math.round(v * k));
  return mixPcm(mixPcm(room, noise(8, RATE, { dbfs: -6, seed: 9 }), 0), asked, 1.2 * RATE);
}

/** A caller over a faint hiss who asks at once, over the greeting: a line's usual caller. */
function usualCaller(): Int16Array {
  const asked = speak("Hello, I would like to know where you are located and when you are open.", {
    rate: RATE,
    voice: "en-us",
    wpm: 165,
  });
  return mixPcm(noise(7000, RATE, { dbfs: -60, seed: 6 }), asked, 0.5 * RATE);
}

/**
 * Over a faint hiss, someone behind the caller begins to read 0.6 s into the call (after it
 * connected, before anyone spoke), 16 dB under the caller; the caller asks at 4.5 s.
 */
function talkerBeginsFirst(): Int16Array {
  const asked = speak("Where are you located?", { rate: RATE, voice: "en-us", wpm: 165 });
  const read = speak(ROOM_TEXT, { rate: RATE, voice: "en-gb+f4", wpm: 150 });
  const room = gain(read, speechLevelDb(asked) - 16 - speechLevelDb(read)).subarray(0, 12 * RATE);
  const line = mixPcm(noise(12_000, RATE, { dbfs: -60, seed: 7 }), room, 0.6 * RATE);
  return mixPcm(line, asked, 4.5 * RATE);
}

let bridge: Bridge;
let dir: string;

/** A call through the simulator with `samples` as the caller's line; its record. */
async function callWith(samples: Int16Array, maxSeconds: number): Promise<CallRecord> {
  const r = await simulateCall({
    url: bridge.url,
    bridgeToken: bridge.token,
    authToken: AUTH_TOKEN,
    caller: { samples, rate: RATE },
    maxSeconds,
  });
  return r.transcript as CallRecord;
}
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-e2e-room-"));
  const config = twilioTestConfig(dir);
  bridge = await startTwilioTestBridge(config);
}, 60_000);
afterAll(async () => {
  await bridge.close(0);
  rmSync(dir, { recursive: true, force: true });
});

describe("a caller with a voice behind them", () => {
  it("has their turn ended by their own voice and answered, the greeting heard whole", async () => {
    const record = await callWith(callerWithRoom(), 30);
    const turns = record.turns as TurnView[];
    // The greeting, the caller's one turn, and an answer to it heard after it: in that order (and
    // no other turn of the caller's; the agent may ask whether they are still there at the end).
    expect(turns.slice(0, 3).map((t) => t.role)).toEqual(["assistant", "user", "assistant"]);
    expect(turns.filter((t) => t.role === "user")).toHaveLength(1);
    const [greeting, , answer] = turns as [
      Extract<TurnView, { role: "assistant" }>,
      TurnView,
      Extract<TurnView, { role: "assistant" }>,
    ];
    expect(greeting.interrupted).toBe(false);
    expect(answer.text.length).toBeGreaterThan(0);
    // Nothing the room said stopped the agent, or was taken for the caller's.
    expect(record.events.filter((e) => e.type === "barge-in")).toEqual([]);
    // The call's levels: the caller well above the room, whose speech outlasted the caller's.
    const levels = record.levels!;
    expect(levels.callerDb! - levels.noiseDb!).toBeGreaterThan(10);
    expect(levels.roomHeldMs).toBeGreaterThan(0);
    const metrics = await (await fetch(`${bridge.url}/metrics`)).text();
    expect(metrics).toMatch(/voice_bridge_caller_speech_level_dbfs_count [1-9]/);
    expect(metrics).toMatch(/voice_bridge_call_room_held_seconds_count [1-9]/);
  }, 60_000);

  it("answers a caller who said hello as the call connected, their hello taken for no turn", async () => {
    const turns = (await callWith(callerSaysHelloFirst(), 25)).turns as TurnView[];
    // Heard as the call connected, the "Hello?" might have been a TV's: it is no turn, and the
    // greeting plays on. But it must not bar the caller's voice: their question is answered.
    expect(turns.slice(0, 3).map((t) => t.role)).toEqual(["assistant", "user", "assistant"]);
    expect(turns.filter((t) => t.role === "user")).toHaveLength(1);
    expect((turns[0] as Extract<TurnView, { role: "assistant" }>).interrupted).toBe(false);
    expect(turns[2]!.text.length).toBeGreaterThan(0);
  }, 60_000);

  it("lets no talker who begins before the caller stop the greeting, on a line whose callers it knew before a restart", async () => {
    // Three calls teach the line how loud its callers are (line-level.ts); the bridge restarted
    // since knows it from their records.
    await Promise.all([1, 2, 3].map(() => callWith(usualCaller(), 6)));
    await bridge.close(0);
    bridge = await startTwilioTestBridge(twilioTestConfig(dir));
    const record = await callWith(talkerBeginsFirst(), 25);
    const turns = record.turns as TurnView[];
    // The talker, far under the line's callers, is not taken for this one's: the greeting plays
    // whole, and the caller's question is their one turn, answered.
    expect(record.events.filter((e) => e.type === "barge-in")).toEqual([]);
    expect(turns.slice(0, 3).map((t) => t.role)).toEqual(["assistant", "user", "assistant"]);
    expect((turns[0] as Extract<TurnView, { role: "assistant" }>).interrupted).toBe(false);
    expect(turns.filter((t) => t.role === "user")).toHaveLength(1);
    expect(turns[2]!.text.length).toBeGreaterThan(0);
    // The record says what the call was judged against, and that the line held the talker back.
    const levels = record.levels!;
    expect(levels.lineDb).toBeDefined();
    expect(levels.lineHeldMs).toBeGreaterThan(0);
  }, 90_000);

  it("stops the greeting for a caller who cuts in at once, though the line opened with a pop", async () => {
    const turns = (await callWith(popThenInterruption(), 20)).turns as TurnView[];
    // The pop is no voice of the room's: the caller's words over the greeting stop it, and are
    // their turn, answered.
    expect(turns.slice(0, 3).map((t) => t.role)).toEqual(["assistant", "user", "assistant"]);
    expect((turns[0] as Extract<TurnView, { role: "assistant" }>).interrupted).toBe(true);
    expect(turns[2]!.text.length).toBeGreaterThan(0);
  }, 60_000);
});
