// The caller-level gate on synthesized voices: speech at the caller's own level is theirs, a
// voice well below it in the room is not, whatever the voice detector says. The detector's events
// are scripted as Silero reports them: a voice's onset ~120 ms late, its end ~300 ms late, and a
// room that talks on keeps it in speech.
import { describe, expect, it } from "vitest";
import { fliteSynth } from "../../bench/lib/turns-flite.ts";
import { MinimumTracker, PeakTracker, QuantileTracker, ShortLevel } from "../../codecs/level-tracker.ts";
import { CallerLevel } from "../../src/session/caller-level.ts";
import { CallerVoice } from "../../src/session/caller-voice.ts";
import { EARLY_END_LOUD_MS } from "../../src/session/speaker-listener.ts";
import { HANG_MS } from "../../src/session/voice-end.ts";
import { noise } from "../helpers/noise.ts";
import { speak } from "../helpers/speech.ts";
import { mixAt, voiceSignal } from "../helpers/voice-signals.ts";

const RATE = 8000;
const FRAME = 160;
const at = (ms: number) => Math.round((ms * RATE) / 1000);

interface Vad {
  /** When the detector reports it (stream ms). */
  reportMs: number;
  type: "start" | "end";
  atMs: number;
}

/**
 * Plays `pcm` through a gate in 20 ms frames with the detector's events; returns the gate's events.
 * `onFrame` sees the gate after each frame and its events.
 */
function play(
  pcm: Int16Array,
  vad: Vad[],
  enabled = true,
  onFrame?: (gate: CallerVoice, nowMs: number) => void,
  line?: { lineDb: number; agentUntilMs: number },
) {
  const events: Array<{ type: "start" | "end" | "restart"; atMs: number; nowMs: number }> = [];
  let nowMs = 0;
  const gate = new CallerVoice(
    enabled,
    {
      start: (atMs) => events.push({ type: "start", atMs, nowMs }),
      end: (atMs) => events.push({ type: "end", atMs, nowMs }),
      restart: (atMs) => events.push({ type: "restart", atMs, nowMs }),
    },
    // The agent speaks (its greeting) from the call's start until `agentUntilMs`.
    line && { lineDb: line.lineDb, agentSpeaking: () => nowMs < line.agentUntilMs },
  );
  const pending = [...vad].sort((a, b) => a.reportMs - b.reportMs);
  for (let s = 0; s + FRAME <= pcm.length; s += FRAME) {
    gate.frame(pcm.subarray(s, s + FRAME), RATE);
    nowMs = ((s + FRAME) * 1000) / RATE;
    while (pending.length && pending[0]!.reportMs <= nowMs) {
      const e = pending.shift()!;
      if (e.type === "start") gate.vadStart(e.atMs);
      else gate.vadEnd(e.atMs);
    }
    onFrame?.(gate, nowMs);
  }
  return { events, gate };
}

const hiss = (ms: number, dbfs = -60) => noise(ms, RATE, { dbfs, seed: 11 });

/**
 * Music, to the level gate (pink noise), whose chord as the call connected was louder: its first
 * 250 ms at `chordDbfs`, then `musicDbfs` until `ms`.
 */
const musicWithChord = (ms: number, chordDbfs: number, musicDbfs: number, seed: number) => [
  { pcm: noise(250, RATE, { dbfs: chordDbfs, seed, color: "pink" }) },
  { pcm: noise(ms, RATE, { dbfs: musicDbfs, seed: seed + 1, color: "pink" }), at: at(250) },
];

const TALKER_TEXT =
  "The weather over the weekend should stay mild, with light winds from the west and a chance of showers on Sunday afternoon. In local news, the council has approved plans for a new library near the station, and work is expected to begin early next spring.";
/** How long after the caller's voice their speech may end: a soft last word's time, ms. */
const SOFT_END_MS = 600;

/** `pcm` scaled to an RMS of `dbfs`. */
function atRms(pcm: Int16Array, dbfs: number): Int16Array {
  let sum = 0;
  for (const v of pcm) sum += v * v;
  const k = 10 ** (dbfs / 20) / Math.sqrt(sum / pcm.length / 32768 ** 2);
  return Int16Array.from(pcm, (v) => Math.max(-32768, Math.min(32767, Math.round(v * k))));
}

/**
 * Plays `pcm` as play() does, asking the gate of each 32 ms window the detector decides, as it
 * decides it; `share` is how many of the windows in [fromMs, toMs) it answered `value` for.
 */
function nearWindows(pcm: Int16Array, vad: Vad[]) {
  const windows = new Map<number, ReturnType<CallerVoice["near"]>>();
  let next = 0;
  const { gate } = play(pcm, vad, true, (g, nowMs) => {
    for (; next + 32 <= nowMs; next += 32) windows.set(next, g.near(next, next + 32));
  });
  const share = (fromMs: number, toMs: number, value: "clear" | true) => {
    const inside = [...windows].filter(([ms]) => ms >= fromMs && ms + 32 <= toMs);
    return inside.filter(([, v]) => v === value).length / inside.length;
  };
  return { gate, windows, share };
}

/** Plays `pcm` as play() does, the detector scoring each 32 ms window `score(its start)` as it decides it. */
function playScored(pcm: Int16Array, vad: Vad[], score: (ms: number) => number) {
  let next = 0;
  return play(pcm, vad, true, (g, nowMs) => {
    for (; next + 32 <= nowMs; next += 32) g.near(next, next + 32, score(next));
  });
}

/**
 * The caller heard at `levelDbfs` for 2 s from `fromMs` (the detector's speech, as it reports it),
 * then raising their voice to `raised.dbfs` for `raised.ms` 3 s after they began.
 */
function callerThenRaised(fromMs: number, levelDbfs: number, raised: { ms: number; dbfs: number }) {
  const parts = [
    {
      pcm: voiceSignal({ rate: RATE, ms: 2000, dbfs: levelDbfs, f0: 120, seed: 62, pauseShare: 0 }),
      at: at(fromMs),
    },
    {
      pcm: voiceSignal({ rate: RATE, ms: raised.ms, dbfs: raised.dbfs, f0: 125, seed: 63, pauseShare: 0 }),
      at: at(fromMs + 3000),
    },
  ];
  const vad: Vad[] = [
    { reportMs: fromMs + 120, type: "start", atMs: fromMs },
    { reportMs: fromMs + 2300, type: "end", atMs: fromMs + 2000 },
  ];
  return { parts, vad };
}

/**
 * Nothing but hiss as the call connects; then the room talks (from 1 s, at `talkerDbfs`); the
 * caller, at -20 dBFS, at 3 s for 1.5 s. The detector hears speech from the talker's start to its end.
 */
function talkerThenCaller(talkerDbfs = -36): { pcm: Int16Array; vad: Vad[] } {
  const pcm = mixAt([
    { pcm: hiss(9000) },
    { pcm: voiceSignal({ rate: RATE, ms: 8000, dbfs: talkerDbfs, f0: 200, seed: 12 }), at: at(1000) },
    {
      pcm: voiceSignal({ rate: RATE, ms: 1500, dbfs: -20, f0: 110, seed: 13, pauseShare: 0.1 }),
      at: at(3000),
    },
  ]);
  const vad: Vad[] = [
    { reportMs: 1120, type: "start", atMs: 1000 },
    { reportMs: 8900, type: "end", atMs: 8700 },
  ];
  return { pcm, vad };
}

describe("the caller's voice and the room's", () => {
  it("in a quiet room passes the detector's speech through as it is", () => {
    const pcm = mixAt([
      { pcm: hiss(4000) },
      { pcm: voiceSignal({ rate: RATE, ms: 1500, dbfs: -22, f0: 120, seed: 1 }), at: at(1000) },
    ]);
    const { events } = play(pcm, [
      { reportMs: 1120, type: "start", atMs: 1000 },
      { reportMs: 2800, type: "end", atMs: 2520 },
    ]);
    expect(events.map(({ type, atMs }) => ({ type, atMs }))).toEqual([
      { type: "start", atMs: 1000 },
      { type: "end", atMs: 2520 },
    ]);
  });

  it("does not take a talker 16 dB below the caller for them, and ends the caller's turn with their voice", () => {
    // The room talks from before the call to its end; the caller speaks from 3 s to 5 s.
    const room = voiceSignal({ rate: RATE, ms: 12_500, dbfs: -36, f0: 200, seed: 2 }).subarray(at(500));
    const caller = voiceSignal({ rate: RATE, ms: 2000, dbfs: -20, f0: 110, seed: 3, pauseShare: 0.1 });
    const pcm = mixAt([{ pcm: hiss(12_000) }, { pcm: room }, { pcm: caller, at: at(3000) }]);
    const { events, gate } = play(pcm, [
      { reportMs: 120, type: "start", atMs: 0 },
      { reportMs: 11_900, type: "end", atMs: 11_700 },
    ]);
    expect(events.map((e) => e.type)).toEqual(["start", "end"]);
    const [start, end] = events;
    expect(start!.atMs).toBeGreaterThanOrEqual(2900);
    expect(start!.atMs).toBeLessThan(3300);
    // The caller's voice ended at ~5 s; the turn ends there, decided within the hang.
    expect(end!.atMs).toBeGreaterThan(4700);
    expect(end!.atMs).toBeLessThan(5200);
    expect(end!.nowMs - end!.atMs).toBeLessThanOrEqual(HANG_MS + 20);
    const f = gate.figures();
    expect(f.callerDb).toBeGreaterThan(-25);
    expect(f.callerDb).toBeLessThan(-15);
    expect(f.noiseDb).toBeLessThan(f.callerDb! - 10);
    // Learned from the caller's own ~2 s of speech, not from the talker after it.
    expect(f.callerSpeechMs).toBeGreaterThan(1000);
    expect(f.callerSpeechMs).toBeLessThanOrEqual(2200);
    // The detector heard speech for ~6.5 s after the caller's had ended.
    expect(f.roomHeldMs).toBeGreaterThan(6000);
  });

  it("over a loud room, counts the caller's pause from their voice alone, the detector still in speech", () => {
    // As above: the room talks on, 16 dB under the caller (a loud room), and the detector with it.
    // The upload's early end waits for a pause of the caller's (speaker-listener.ts): it must not
    // wait for the detector's, which never comes, nor for the end of their speech HANG_MS later.
    const room = voiceSignal({ rate: RATE, ms: 12_500, dbfs: -36, f0: 200, seed: 2 }).subarray(at(500));
    const caller = voiceSignal({ rate: RATE, ms: 2000, dbfs: -20, f0: 110, seed: 3, pauseShare: 0.1 });
    const pcm = mixAt([{ pcm: hiss(12_000) }, { pcm: room }, { pcm: caller, at: at(3000) }]);
    let pausedAt: number | undefined;
    let loud = false;
    const { events } = play(
      pcm,
      [
        { reportMs: 120, type: "start", atMs: 0 },
        { reportMs: 11_900, type: "end", atMs: 11_700 },
      ],
      true,
      (gate, nowMs) => {
        if (nowMs < 5000 || pausedAt !== undefined || !gate.speaking) return;
        loud = gate.level.roomIsLoud();
        if (gate.pauseMs(0) >= EARLY_END_LOUD_MS) pausedAt = nowMs;
      },
    );
    expect(loud).toBe(true);
    const end = events.find((e) => e.type === "end")!;
    // Their voice ended at ~5 s: the pause is theirs EARLY_END_LOUD_MS later, before the end.
    expect(pausedAt).toBeDefined();
    expect(pausedAt!).toBeLessThan(5000 + EARLY_END_LOUD_MS + 150);
    expect(pausedAt!).toBeLessThan(end.nowMs);
  });

  it("does not take the room's voice the detector hears right after a cough for the caller's onset", () => {
    // A room that talks from the first frame (its peaks are known); a cough, no voice, at 1.5 s.
    // The detector hears speech begin just after the cough (the room's voice): its own frames are
    // below the bar, but the short level still carries the cough for ~100 ms.
    const room = () => voiceSignal({ rate: RATE, ms: 5000, dbfs: -32, f0: 190, seed: 21 });
    const cough = noise(160, RATE, { dbfs: -14, seed: 22, color: "white" });
    const vad: Vad[] = [
      { reportMs: 1800, type: "start", atMs: 1680 },
      { reportMs: 3300, type: "end", atMs: 3000 },
    ];
    const roomOnly = play(mixAt([{ pcm: hiss(5000) }, { pcm: room() }, { pcm: cough, at: at(1500) }]), [
      { reportMs: 120, type: "start", atMs: 0 },
      { reportMs: 400, type: "end", atMs: 100 },
      ...vad,
    ]);
    expect(roomOnly.events).toEqual([]);
    // The caller's own voice right after the cough is still theirs.
    const caller = voiceSignal({ rate: RATE, ms: 1200, dbfs: -18, f0: 110, seed: 23 });
    const withCaller = play(
      mixAt([
        { pcm: hiss(5000) },
        { pcm: room() },
        { pcm: cough, at: at(1500) },
        { pcm: caller, at: at(1680) },
      ]),
      [{ reportMs: 120, type: "start", atMs: 0 }, { reportMs: 400, type: "end", atMs: 100 }, ...vad],
    );
    expect(withCaller.events[0]).toMatchObject({ type: "start" });
    expect(withCaller.events[0]!.atMs).toBeGreaterThanOrEqual(1680);
    expect(withCaller.events[0]!.atMs).toBeLessThan(1800);
  });

  it("takes a talker who began after the call for the caller only until the caller speaks", () => {
    const { pcm, vad } = talkerThenCaller();
    const { events } = play(pcm, vad);
    // The room's talker first passes for the caller (no louder voice had been heard); once the
    // caller speaks, the utterance starts again with them, and ends with their voice.
    expect(events.map((e) => e.type)).toEqual(["start", "restart", "end"]);
    expect(events[1]!.atMs).toBeGreaterThan(2900);
    expect(events[1]!.atMs).toBeLessThan(3200);
    expect(events[2]!.atMs).toBeGreaterThan(4200);
    expect(events[2]!.atMs).toBeLessThan(4700);
  });

  it("does not take a talker far under the line's usual caller for the caller while the greeting plays", () => {
    // As above; the line's callers are usually at -20 dBFS, and the greeting plays until 4 s: the
    // caller cuts into it at 3 s.
    const { pcm, vad } = talkerThenCaller();
    const { events, gate } = play(pcm, vad, true, undefined, { lineDb: -20, agentUntilMs: 4000 });
    // Nothing stopped the greeting before the caller spoke: their voice is the first taken.
    expect(events.map((e) => e.type)).toEqual(["start", "end"]);
    expect(events[0]!.atMs).toBeGreaterThan(2900);
    expect(events[0]!.atMs).toBeLessThan(3200);
    // The call's figures say what it was judged against, and how long the line held the talker.
    const figures = gate.figures();
    expect(figures.lineDb).toBe(-20);
    expect(figures.lineHeldMs).toBeGreaterThan(500);
    expect(figures.lineHeldMs).toBeLessThan(2200);
    // A line whose callers are as soft as the talker: it is taken for the caller, as before.
    const soft = play(pcm, vad, true, undefined, { lineDb: -34, agentUntilMs: 4000 }).events;
    expect(soft.map((e) => e.type)).toEqual(["start", "restart", "end"]);
    expect(soft[0]!.atMs).toBeLessThan(1200);
  });

  it("does not take a talker whose loudest syllables come within 6 dB of the line's usual caller for the caller while the greeting plays", () => {
    // A conversation at the next table 10 dB under the caller reached 0.5–6 dB under the line's
    // usual level at its loudest syllables: here a talker at -27 dBFS (its short level at most
    // -24.4) on a line whose callers are at -20, from 1 s, the greeting playing until 4 s; the
    // caller cuts into it at 3 s.
    const { pcm, vad } = talkerThenCaller(-27);
    const { events } = play(pcm, vad, true, undefined, { lineDb: -20, agentUntilMs: 4000 });
    expect(events[0]).toMatchObject({ type: "start" });
    expect(events[0]!.atMs).toBeGreaterThan(2900);
    expect(events[0]!.atMs).toBeLessThan(3200);
  });

  it("hears a caller 3 dB softer than the line's usual ones over the greeting at once", () => {
    const pcm = mixAt([
      { pcm: hiss(4000) },
      {
        pcm: voiceSignal({ rate: RATE, ms: 1500, dbfs: -23, f0: 110, seed: 13, pauseShare: 0.1 }),
        at: at(1000),
      },
    ]);
    const vad: Vad[] = [
      { reportMs: 1120, type: "start", atMs: 1000 },
      { reportMs: 2800, type: "end", atMs: 2500 },
    ];
    const { events } = play(pcm, vad, true, undefined, { lineDb: -20, agentUntilMs: 4000 });
    expect(events[0]).toMatchObject({ type: "start" });
    expect(events[0]!.atMs).toBeLessThan(1100);
  });

  it("hears a caller louder than the line's usual ones over the greeting, though a voice as the call connected set the room's peaks near them", () => {
    // A shop's announcement as the call connects, until 700 ms, at its loudest (short level) -17.6
    // dBFS on a line whose callers are usually at -20; the caller cuts into the greeting at 1.1 s,
    // at their loudest -14.4: as they stood in the recorded shop. Their voice stood under the bar
    // the announcement set, the room then learned their words as its own, and they went unheard.
    const pcm = mixAt([
      { pcm: hiss(4000) },
      { pcm: voiceSignal({ rate: RATE, ms: 700, dbfs: -20, f0: 210, seed: 31 }) },
      {
        pcm: voiceSignal({ rate: RATE, ms: 1800, dbfs: -17, f0: 110, seed: 13, pauseShare: 0.1 }),
        at: at(1100),
      },
    ]);
    const vad: Vad[] = [
      { reportMs: 120, type: "start", atMs: 0 },
      { reportMs: 1000, type: "end", atMs: 700 },
      { reportMs: 1220, type: "start", atMs: 1100 },
      { reportMs: 3200, type: "end", atMs: 2900 },
    ];
    const { events } = play(pcm, vad, true, undefined, { lineDb: -20, agentUntilMs: 4000 });
    expect(events[0]).toMatchObject({ type: "start" });
    expect(events[0]!.atMs).toBeGreaterThan(1000);
    expect(events[0]!.atMs).toBeLessThan(1500);
  });

  it("hears a caller far softer than the line's usual ones when they speak again after the greeting", () => {
    // The caller, 14 dB under the line's usual level, over a hiss, says something over the
    // greeting (1 s to 1.8 s), which plays until 2 s, and asks at 4.5 s.
    const voice = (ms: number, seed: number) =>
      voiceSignal({ rate: RATE, ms, dbfs: -34, f0: 110, seed, pauseShare: 0.1 });
    const pcm = mixAt([
      { pcm: hiss(8000) },
      { pcm: voice(800, 13), at: at(1000) },
      { pcm: voice(1500, 14), at: at(4500) },
    ]);
    const vad: Vad[] = [
      { reportMs: 1120, type: "start", atMs: 1000 },
      { reportMs: 2100, type: "end", atMs: 1800 },
      { reportMs: 4620, type: "start", atMs: 4500 },
      { reportMs: 6300, type: "end", atMs: 6000 },
    ];
    const { events } = play(pcm, vad, true, undefined, { lineDb: -20, agentUntilMs: 2000 });
    expect(events.map((e) => e.type)).toEqual(["start", "end"]);
    expect(events[0]!.atMs).toBeGreaterThan(4400);
    expect(events[0]!.atMs).toBeLessThan(4700);
    // With no line known, as any first voice: at once.
    const first = play(pcm, vad).events;
    expect(first[0]!.atMs).toBeLessThan(1100);
  });

  it("hears a caller who said hello as the call connected, when they speak after the greeting", () => {
    // Near silence; the caller's "Hello?" (0–0.5 s) as the call connects; their question at 4 s.
    const caller = (ms: number, seed: number) =>
      voiceSignal({ rate: RATE, ms, dbfs: -20, f0: 115, seed, pauseShare: 0.1 });
    const pcm = mixAt([
      { pcm: hiss(7000) },
      { pcm: caller(500, 71) },
      { pcm: caller(1500, 72), at: at(4000) },
    ]);
    const { events, gate } = play(pcm, [
      { reportMs: 120, type: "start", atMs: 0 },
      { reportMs: 800, type: "end", atMs: 500 },
      { reportMs: 4120, type: "start", atMs: 4000 },
      { reportMs: 5800, type: "end", atMs: 5500 },
    ]);
    // The "Hello?" is not a turn (it might have been a TV's), but neither does it bar their voice.
    expect(events.map((e) => e.type)).toEqual(["start", "end"]);
    expect(events[0]!.atMs).toBeGreaterThanOrEqual(3900);
    expect(events[0]!.atMs).toBeLessThan(4200);
    expect(events[1]!.atMs).toBeGreaterThan(5200);
    // Nor does its soft end stay behind as a room that talks within 20 dB of them.
    expect(gate.level.roomIsLoud()).toBe(false);
    expect(gate.level.roomPeakDb).toBeLessThan(-45);
  });

  it("hears a caller's first words though the line opened with a pop", () => {
    // Near silence but for a pop (8 ms of noise 6 dB under full scale) at 0, 120 or 250 ms into
    // the call; the caller at 1 s, whose words the detector is not sure of.
    for (const popMs of [0, 120, 250]) {
      const pcm = mixAt([
        { pcm: hiss(4000) },
        { pcm: noise(8, RATE, { dbfs: -6, seed: 9 }), at: at(popMs) },
        {
          pcm: voiceSignal({ rate: RATE, ms: 1500, dbfs: -22, f0: 110, seed: 13, pauseShare: 0.1 }),
          at: at(1000),
        },
      ]);
      const { events, gate } = play(pcm, [
        { reportMs: 1120, type: "start", atMs: 1000 },
        { reportMs: 2800, type: "end", atMs: 2500 },
      ]);
      expect(
        events.map((e) => e.type),
        `pop at ${popMs} ms`,
      ).toEqual(["start", "end"]);
      expect(events[0]!.atMs).toBeLessThan(1100);
      // Nor is the pop the room's loudness.
      expect(gate.level.roomPeakDb).toBeLessThan(-45);
    }
  });

  it("hears a caller who said hello as the call connected over a talker who goes on behind them", () => {
    // The caller's "Hello?" as the call connects, a talker 16 dB under them from 0.2 s on (the
    // detector in speech throughout), and the caller's question at 4 s.
    const pcm = mixAt([
      { pcm: hiss(8000) },
      { pcm: voiceSignal({ rate: RATE, ms: 500, dbfs: -20, f0: 115, seed: 73 }) },
      { pcm: voiceSignal({ rate: RATE, ms: 7800, dbfs: -36, f0: 200, seed: 74 }), at: at(200) },
      {
        pcm: voiceSignal({ rate: RATE, ms: 1500, dbfs: -20, f0: 115, seed: 75, pauseShare: 0.1 }),
        at: at(4000),
      },
    ]);
    const { events } = play(pcm, [
      { reportMs: 120, type: "start", atMs: 0 },
      { reportMs: 7950, type: "end", atMs: 7800 },
    ]);
    // Neither the "Hello?" nor the talker is a turn; the question is, and it ends with their voice.
    expect(events.map((e) => e.type)).toEqual(["start", "end"]);
    expect(events[0]!.atMs).toBeGreaterThanOrEqual(3900);
    expect(events[0]!.atMs).toBeLessThan(4300);
    expect(events[1]!.atMs).toBeGreaterThan(5200);
    expect(events[1]!.atMs).toBeLessThan(6000);
  });

  it("keeps a talker heard as the call connected for the room's across its pauses between sentences", () => {
    // A talker 16 dB under the caller's usual level from the first frame, pausing 0.8 s between
    // sentences (the detector's speech ends and starts again); nobody else speaks.
    const sentence = (seed: number) =>
      voiceSignal({ rate: RATE, ms: 2000, dbfs: -36, f0: 200, seed, pauseShare: 0 });
    const pcm = mixAt([
      { pcm: hiss(9000) },
      { pcm: sentence(76) },
      { pcm: sentence(77), at: at(2800) },
      { pcm: sentence(78), at: at(5600) },
    ]);
    const { events } = play(pcm, [
      { reportMs: 120, type: "start", atMs: 0 },
      { reportMs: 2300, type: "end", atMs: 2000 },
      { reportMs: 2920, type: "start", atMs: 2800 },
      { reportMs: 5100, type: "end", atMs: 4800 },
      { reportMs: 5720, type: "start", atMs: 5600 },
      { reportMs: 7900, type: "end", atMs: 7600 },
    ]);
    expect(events).toEqual([]);
  });

  it("tells the caller from a talker taken for them by pitch, when they are only 10 dB louder", () => {
    // As above, but the caller is only 10 dB above the talker: by level alone (LOUDER_VOICE_DB)
    // they would pass for the talker getting louder. Their pitch, far from the talker's, tells them.
    const talkerThenCaller = (callerF0: number) =>
      mixAt([
        { pcm: hiss(9000) },
        { pcm: voiceSignal({ rate: RATE, ms: 8000, dbfs: -36, f0: 200, seed: 12 }), at: at(1000) },
        {
          pcm: voiceSignal({ rate: RATE, ms: 1500, dbfs: -26, f0: callerF0, seed: 13, pauseShare: 0.1 }),
          at: at(3000),
        },
      ]);
    const vad: Vad[] = [
      { reportMs: 1120, type: "start", atMs: 1000 },
      { reportMs: 8900, type: "end", atMs: 8700 },
    ];
    const other = play(talkerThenCaller(110), vad).events;
    expect(other.map((e) => e.type)).toEqual(["start", "restart", "end"]);
    expect(other[1]!.atMs).toBeGreaterThan(2900);
    expect(other[1]!.atMs).toBeLessThan(3300);
    expect(other[2]!.atMs).toBeGreaterThan(4200);
    // A voice of the talker's own pitch, 10 dB louder after two seconds of the talker, is not told
    // apart: it may be the caller's own stressed syllable after a soft start (see the next test).
    const same = play(talkerThenCaller(200), vad).events;
    expect(same.map((e) => e.type)).not.toContain("restart");
  });

  it("tells a caller of the talker's pitch by level, 10 dB above a talker heard for seconds", () => {
    // Their level learns from the caller's frames as they come (it follows them up): judged
    // against the level before the first of them, the caller stands 10 dB above, not 4.
    const talkerThenCaller = (talkerMs: number) =>
      mixAt([
        { pcm: hiss(talkerMs + 4000) },
        { pcm: voiceSignal({ rate: RATE, ms: talkerMs + 3000, dbfs: -36, f0: 200, seed: 12 }), at: at(1000) },
        {
          pcm: voiceSignal({ rate: RATE, ms: 1500, dbfs: -26, f0: 200, seed: 13, pauseShare: 0.1 }),
          at: at(1000 + talkerMs),
        },
      ]);
    const vad = (talkerMs: number): Vad[] => [
      { reportMs: 1120, type: "start", atMs: 1000 },
      { reportMs: talkerMs + 3900, type: "end", atMs: talkerMs + 3700 },
    ];
    const long = play(talkerThenCaller(4000), vad(4000)).events;
    expect(long.map((e) => e.type)).toEqual(["start", "restart", "end"]);
    expect(long[1]!.atMs).toBeGreaterThan(4900);
    expect(long[1]!.atMs).toBeLessThan(5400);
    // Heard for only two seconds, the voice taken may be the caller's own, starting softly.
    const short = play(talkerThenCaller(2000), vad(2000)).events;
    expect(short.map((e) => e.type)).not.toContain("restart");
  });

  it("ends the caller's turn with their voice when a talker of another pitch, 5 dB under them, goes on", () => {
    // A talker heard from the start, louder from the moment the caller stops: their syllables
    // stand within the 10 dB under the caller that keeps the caller's speech going, and taught
    // the caller's level to fall toward them (their speech ran on a second, then the talker's
    // started it twice more). Their pitch is another's than the caller's.
    const pcm = mixAt([
      { pcm: hiss(9000) },
      { pcm: voiceSignal({ rate: RATE, ms: 9000, dbfs: -32, f0: 210, seed: 31, pauseShare: 0.05 }) },
      {
        pcm: voiceSignal({ rate: RATE, ms: 2500, dbfs: -20, f0: 110, seed: 32, pauseShare: 0.1 }),
        at: at(2000),
      },
      {
        pcm: voiceSignal({ rate: RATE, ms: 4500, dbfs: -25, f0: 210, seed: 33, pauseShare: 0.05 }),
        at: at(4300),
      },
    ]);
    const { events } = play(pcm, [
      { reportMs: 120, type: "start", atMs: 0 },
      { reportMs: 8900, type: "end", atMs: 8700 },
    ]);
    expect(events.map((e) => e.type)).toEqual(["start", "end"]);
    expect(events[0]!.atMs).toBeGreaterThanOrEqual(1900);
    expect(events[0]!.atMs).toBeLessThan(2300);
    expect(events[1]!.atMs).toBeGreaterThan(4200);
    expect(events[1]!.atMs).toBeLessThan(4800);
  });

  it("ends the caller's turn with their voice when a talker of their pitch, 11 dB under them, taken for them first, goes on", () => {
    // Real voices: flite's kal reading from the call's first moment, taken for the caller (nothing
    // else has been heard), and the caller 11 dB over it, too close to it in level and pitch to
    // show it was the room's. The talker's syllables stand within the 10 dB under the caller that
    // keeps their speech going, and their level, learned from both, is theirs: before, the
    // caller's speech went on for as long as the talker talked. It seldom reaches the caller's
    // usual level, though, which the caller's own voice does at every stressed syllable.
    const talker = atRms(fliteSynth.speak(TALKER_TEXT, { voice: "kal", speed: 1 }), -31);
    const caller = atRms(speak("I would like to check on the order I placed last week", { rate: RATE }), -20);
    const callerEndMs = 2000 + (caller.length * 1000) / RATE;
    const pcm = mixAt([
      { pcm: hiss(10_000) },
      { pcm: talker.subarray(0, at(10_000)) },
      { pcm: caller, at: at(2000) },
    ]);
    const { events } = play(pcm, [{ reportMs: 120, type: "start", atMs: 0 }]);
    const end = events.find((e) => e.type === "end");
    expect(end).toBeDefined();
    expect(end!.atMs).toBeGreaterThan(callerEndMs - 300);
    expect(end!.atMs).toBeLessThan(callerEndMs + SOFT_END_MS);
    expect(end!.nowMs).toBeLessThan(callerEndMs + 1500);
  });

  /**
   * Over a quiet room, the caller's question at -20 dBFS (120 Hz) at 1 s; then, over the reply at
   * 5 s, a voice of `f0` at -27 dBFS, which the detector calls speech.
   */
  function questionThenSofter(f0: number) {
    const pcm = mixAt([
      { pcm: hiss(8000) },
      { pcm: voiceSignal({ rate: RATE, ms: 1500, dbfs: -20, f0: 120, seed: 4 }), at: at(1000) },
      { pcm: voiceSignal({ rate: RATE, ms: 900, dbfs: -27, f0, seed: 9 }), at: at(5000) },
    ]);
    return play(pcm, [
      { reportMs: 1120, type: "start", atMs: 1000 },
      { reportMs: 2800, type: "end", atMs: 2500 },
      { reportMs: 5120, type: "start", atMs: 5000 },
      { reportMs: 6200, type: "end", atMs: 5900 },
    ]);
  }

  it("hears the caller's own voice 7 dB softer than they first spoke, over a quiet room", () => {
    // Their "wait" over the reply, in their own pitch.
    const { events, gate } = questionThenSofter(120);
    expect(events.map((e) => e.type)).toEqual(["start", "end", "start", "end"]);
    // Heard as it began (give or take its first soft frames), not the room's voice to learn.
    expect(Math.abs(events[2]!.atMs - 5000)).toBeLessThanOrEqual(60);
    expect(events[2]!.nowMs).toBeLessThan(5300);
    expect(gate.level.roomPeakDb).toBeLessThan(-45);
  });

  it("does not take a new voice of another pitch, as soft as that, for the caller's", () => {
    // A talker of another pitch (a TV switched on).
    const { events } = questionThenSofter(220);
    expect(events.map((e) => e.type)).toEqual(["start", "end"]);
  });

  it("lets no talker 12 dB below the caller start their speech once the caller has been heard", () => {
    // (Not right after the caller stopped: then the rest of their sentence may begin softly.)
    const pcm = mixAt([
      { pcm: hiss(10_000) },
      { pcm: voiceSignal({ rate: RATE, ms: 1500, dbfs: -20, f0: 120, seed: 4 }), at: at(1000) },
      { pcm: voiceSignal({ rate: RATE, ms: 1500, dbfs: -32, f0: 210, seed: 5 }), at: at(5000) },
      { pcm: voiceSignal({ rate: RATE, ms: 800, dbfs: -21, f0: 120, seed: 6 }), at: at(8000) },
    ]);
    const { events } = play(pcm, [
      { reportMs: 1120, type: "start", atMs: 1000 },
      { reportMs: 2800, type: "end", atMs: 2500 },
      { reportMs: 5120, type: "start", atMs: 5000 },
      { reportMs: 6800, type: "end", atMs: 6500 },
      { reportMs: 8120, type: "start", atMs: 8000 },
      { reportMs: 9100, type: "end", atMs: 8800 },
    ]);
    expect(events.map((e) => e.type)).toEqual(["start", "end", "start", "end"]);
    expect(events.map((e) => e.atMs)).toEqual([1000, 2500, expect.any(Number), 8800]);
    // The last start is the caller's onset, give or take the level's first soft frame.
    expect(Math.abs(events[2]!.atMs - 8000)).toBeLessThanOrEqual(40);
  });

  it("takes a steady noise that never lets up for the room, not for a turn that never ends", () => {
    // Traffic-like noise as loud as speech comes on at 2 s and stays; the detector calls it speech.
    const pcm = mixAt([
      { pcm: hiss(10_000) },
      { pcm: voiceSignal({ rate: RATE, ms: 1000, dbfs: -20, f0: 120, seed: 7 }), at: at(500) },
      { pcm: noise(8000, RATE, { dbfs: -24, seed: 8, color: "pink" }), at: at(2000) },
    ]);
    const { events } = play(pcm, [
      { reportMs: 620, type: "start", atMs: 500 },
      { reportMs: 1800, type: "end", atMs: 1500 },
      { reportMs: 2120, type: "start", atMs: 2000 },
    ]);
    const last = events.at(-1)!;
    // Whatever it made of the noise's onset, the caller's speech is over within its floor's window,
    // and the noise starts nothing after.
    expect(last.type).toBe("end");
    expect(last.nowMs).toBeLessThan(5500);
  });

  it("hears a caller 10 dB above music whose first chord, as the call connected, was nearly as loud", () => {
    // Music: a loud first chord and drum as the call connects (3 dB below the caller's level), then
    // its usual level, 10 dB below them; the detector never calls it speech. The caller speaks at
    // 4.5 s, when the room has been heard for longer than its early margin lasts.
    const pcm = mixAt([
      { pcm: hiss(8000) },
      ...musicWithChord(8000, -25, -32, 21),
      { pcm: voiceSignal({ rate: RATE, ms: 2000, dbfs: -22, f0: 120, seed: 23 }), at: at(4500) },
    ]);
    const { events } = play(pcm, [
      { reportMs: 4620, type: "start", atMs: 4500 },
      { reportMs: 6800, type: "end", atMs: 6500 },
    ]);
    expect(events.map((e) => e.type)).toEqual(["start", "end"]);
    expect(events[0]!.atMs).toBeLessThan(4700);
  });

  it("hears a caller's first words the detector is sure of, over a chord as loud as the call connected", () => {
    // Music whose chord, as the call connected, was nearly as loud as the caller's first words (its
    // peaks set the bar above them), then 12 dB below them. The caller speaks 0.9 s in, the call's
    // first speech to the detector.
    const pcm = mixAt([
      { pcm: hiss(4000) },
      ...musicWithChord(4000, -19, -32, 41),
      { pcm: voiceSignal({ rate: RATE, ms: 1200, dbfs: -20, f0: 120, seed: 43 }), at: at(900) },
    ]);
    const vad: Vad[] = [
      { reportMs: 1020, type: "start", atMs: 900 },
      { reportMs: 2400, type: "end", atMs: 2100 },
    ];
    /** The gate's events, the detector scoring the sound `score` (0 elsewhere). */
    const run = (score: number) => playScored(pcm, vad, (ms) => (ms >= 900 && ms < 2100 ? score : 0)).events;
    const sure = run(0.99);
    expect(sure.map((e) => e.type)).toEqual(["start", "end"]);
    expect(sure[0]!.atMs).toBeLessThan(1000);
    // Unsure of it (music's own stretches the detector called speech scored 0.55–0.92), the gate
    // keeps the chord's bar: the same sound is not the caller's.
    expect(run(0.9)).toEqual([]);
  });

  it("keeps the peaks of a talker the detector is sure of, begun after the call connected, in its bar", () => {
    // A hiss, then a talker from 0.6 s just over it, the call's first speech to the detector, which
    // is sure of it throughout; from 1.8 s the talker louder, still 14 dB under the caller, who
    // speaks from 3.5 s. What the talker said since 0.6 s set the bar its louder words must reach.
    const talker = (ms: number, dbfs: number, seed: number) =>
      voiceSignal({ rate: RATE, ms, dbfs, f0: 200, seed, pauseShare: 0 });
    const pcm = mixAt([
      { pcm: hiss(6000, -46) },
      { pcm: talker(1200, -45, 5), at: at(600) },
      { pcm: talker(4000, -40, 6), at: at(1800) },
      {
        pcm: voiceSignal({ rate: RATE, ms: 1500, dbfs: -26, f0: 110, seed: 7, pauseShare: 0 }),
        at: at(3500),
      },
    ]);
    const vad: Vad[] = [
      { reportMs: 720, type: "start", atMs: 600 },
      { reportMs: 5900, type: "end", atMs: 5700 },
    ];
    const { events } = playScored(pcm, vad, (ms) => (ms >= 600 ? 0.99 : 0));
    expect(events[0]?.type).toBe("start");
    expect(events[0]!.atMs).toBeGreaterThanOrEqual(3400);
  });

  it("hears the short first syllable of a caller's resumption over music as loud as they are", () => {
    // Music whose first chord, as the call connected, was 2 dB below the caller (its peaks, and its
    // usual loudness, set the bar at their level), then 12 dB below them; the detector never calls
    // it speech. The caller
    // speaks, pauses 700 ms, and goes on with a 60 ms syllable at their level, then the rest of
    // their sentence 300 ms later: the short level's 100 ms never brings that syllable to theirs.
    const voice = (ms: number, dbfs: number, seed: number) =>
      voiceSignal({ rate: RATE, ms, dbfs, f0: 120, seed });
    const pcm = mixAt([
      { pcm: hiss(8000) },
      ...musicWithChord(8000, -20, -30, 31),
      { pcm: voice(1000, -18, 33), at: at(3000) },
      { pcm: voice(60, -17, 34), at: at(4700) },
      { pcm: voice(1000, -18, 35), at: at(5000) },
    ]);
    const { events } = play(pcm, [
      { reportMs: 3120, type: "start", atMs: 3000 },
      { reportMs: 4300, type: "end", atMs: 4000 },
      { reportMs: 4820, type: "start", atMs: 4700 },
      { reportMs: 6300, type: "end", atMs: 6000 },
    ]);
    expect(events.map((e) => e.type)).toEqual(["start", "end", "start", "end"]);
    expect(events[2]!.atMs).toBeLessThan(4800);
  });

  it("tells the detector where a voiced sound stands out over a loud room as a near voice", () => {
    // The windows the detector asks about, 32 ms each, as it decides them (their frames have come).
    const nearShare = (pcm: Int16Array, fromMs: number, toMs: number) => {
      const gate = new CallerVoice(true, { start: () => {}, end: () => {}, restart: () => {} });
      let near = 0;
      let asked = 0;
      let next = fromMs;
      for (let s = 0; s + FRAME <= pcm.length; s += FRAME) {
        gate.frame(pcm.subarray(s, s + FRAME), RATE);
        const nowMs = ((s + FRAME) * 1000) / RATE;
        while (next + 32 <= nowMs && next + 32 <= toMs) {
          asked++;
          if (gate.near(next, next + 32)) near++;
          next += 32;
        }
      }
      return near / asked;
    };
    // A room of noise 10 dB under a voice; the voice, and a burst of unvoiced noise as loud.
    const room = noise(7000, RATE, { dbfs: -30, seed: 41, color: "pink" });
    const voice = voiceSignal({ rate: RATE, ms: 1000, dbfs: -20, f0: 130, seed: 42, pauseShare: 0 });
    const burst = noise(300, RATE, { dbfs: -20, seed: 43 });
    const loud = mixAt([
      { pcm: hiss(7000) },
      { pcm: room },
      { pcm: voice, at: at(3000) },
      { pcm: burst, at: at(5000) },
    ]);
    expect(nearShare(loud, 1000, 2900)).toBe(0);
    expect(nearShare(loud, 3100, 3900)).toBeGreaterThan(0.5);
    expect(nearShare(loud, 5000, 5300)).toBe(0);
    // In a quiet room the detector is left to itself.
    const quiet = mixAt([{ pcm: hiss(7000) }, { pcm: voice, at: at(3000) }]);
    expect(nearShare(quiet, 3100, 3900)).toBe(0);
  });

  it("tells the detector where the caller's voice stands clear of a room that seldom sounds like one", () => {
    // A steady room (pink noise), the caller at their level for 2 s, then raising their voice 18 dB
    // over it (an interruption); then a horn as loud, of another pitch. The windows the detector
    // asks about, 32 ms each, as it decides them.
    const caller = callerThenRaised(3000, -20, { ms: 600, dbfs: -14 });
    const pcm = mixAt([
      { pcm: hiss(9000) },
      { pcm: noise(9000, RATE, { dbfs: -32, seed: 61, color: "pink" }) },
      ...caller.parts,
      {
        pcm: voiceSignal({ rate: RATE, ms: 600, dbfs: -14, f0: 420, seed: 64, pauseShare: 0 }),
        at: at(8000),
      },
    ]);
    const said = (roomTalks: boolean) => {
      const vad = [...caller.vad];
      // A talking room instead: the detector hears speech in it before the caller's.
      if (roomTalks)
        vad.unshift({ reportMs: 420, type: "start", atMs: 300 }, { reportMs: 2950, type: "end", atMs: 2900 });
      return nearWindows(pcm, vad);
    };
    const steady = said(false);
    // Its syllables' peaks (the windows between them dip under the bar).
    expect(steady.share(6050, 6550, "clear")).toBeGreaterThan(0.3);
    // The horn stands out as loud as the caller's voice, but is not theirs.
    expect(steady.share(8050, 8550, true)).toBeGreaterThan(0.5);
    expect(steady.share(8050, 8550, "clear")).toBe(0);
    // Nor is anything before the caller was heard, or over a room that talks.
    expect(steady.share(0, 3000, "clear")).toBe(0);
    const talking = said(true);
    expect([...talking.windows.values()].filter((v) => v === "clear")).toEqual([]);
  });

  it("keeps the caller's raised voice clear of a steady room for as long as the detector misses it", () => {
    // Silero scores a caller raising their voice over a street low, and what the gate does not take
    // for theirs is the room's to learn: its loudness, and the clear bar with it, followed their
    // voice up 13 dB in 700 ms, and the rest of their interruption went unheard. A pink room, the
    // caller heard at their level, then 1.6 s of their voice ~10 dB over the room that the detector
    // never calls speech.
    const caller = callerThenRaised(3000, -24, { ms: 1600, dbfs: -22 });
    const pcm = mixAt([
      { pcm: hiss(9000) },
      { pcm: noise(9000, RATE, { dbfs: -32, seed: 61, color: "pink" }) },
      ...caller.parts,
    ]);
    const { gate, share } = nearWindows(pcm, caller.vad);
    expect(share(6050, 6800, "clear")).toBeGreaterThan(0.3);
    // Its last 800 ms as clear as its first: the bar stayed where the room had put it.
    expect(share(6800, 7600, "clear")).toBeGreaterThan(0.3);
    expect(gate.level.clearDb()).toBeLessThan(-20);
  });

  it("tells the detector where the caller's voice stands clear of a street between its lorries", () => {
    // A bursty room: a quiet bed, and a lorry (pink noise, 24 dB up) 300 ms in a second. Its
    // median lies 30 dB under the caller's raised voice, which the near test takes for a quiet
    // room; but its loudness is a lorry's, and Silero scored a caller there 0.05–0.39.
    const lorries = [0, 1, 2, 6, 7, 8].map((s) => ({
      pcm: noise(300, RATE, { dbfs: -24, seed: 70 + s, color: "pink" }),
      at: at(s * 1000),
    }));
    const caller = callerThenRaised(3350, -22, { ms: 600, dbfs: -14 });
    const pcm = mixAt([
      { pcm: hiss(9000) },
      { pcm: noise(9000, RATE, { dbfs: -48, seed: 69, color: "pink" }) },
      ...lorries,
      ...caller.parts,
    ]);
    const { share } = nearWindows(pcm, caller.vad);
    expect(share(6400, 6900, "clear")).toBeGreaterThan(0.3);
    // The lorries themselves are no voice of theirs.
    expect(share(7000, 7300, "clear")).toBe(0);
  });

  it("keeps a soft last word (12 dB down) in the caller's speech, not what follows it", () => {
    // The detector calls the end late (as a far talker coming in after the caller would make it).
    const pcm = mixAt([
      { pcm: hiss(5000) },
      {
        pcm: voiceSignal({ rate: RATE, ms: 1500, dbfs: -20, f0: 120, seed: 14, pauseShare: 0.05 }),
        at: at(500),
      },
      {
        pcm: voiceSignal({ rate: RATE, ms: 400, dbfs: -32, f0: 120, seed: 15, pauseShare: 0 }),
        at: at(2000),
      },
    ]);
    const { events } = play(pcm, [
      { reportMs: 620, type: "start", atMs: 500 },
      { reportMs: 4000, type: "end", atMs: 3700 },
    ]);
    expect(events.map((e) => e.type)).toEqual(["start", "end"]);
    expect(events[1]!.atMs).toBeGreaterThan(2300);
    expect(events[1]!.atMs).toBeLessThan(2600);
  });

  it("does not take a lorry passing as the caller stops for their voice going on", () => {
    // Over a street's bed: the caller heard for 2 s (YIN finds their pitch in their loudest frames),
    // then a short "okay", and right after it a lorry's rumble 2.5 dB under their level for 500 ms.
    // The detector stays in speech through the lorry; the caller is still speaking to the gate.
    const pcm = mixAt([
      { pcm: hiss(6000) },
      { pcm: noise(6000, RATE, { dbfs: -46, seed: 69, color: "pink" }) },
      {
        pcm: voiceSignal({ rate: RATE, ms: 2000, dbfs: -22, f0: 120, seed: 62, pauseShare: 0.1 }),
        at: at(1000),
      },
      {
        pcm: voiceSignal({ rate: RATE, ms: 600, dbfs: -22, f0: 120, seed: 64, pauseShare: 0 }),
        at: at(4000),
      },
      { pcm: noise(500, RATE, { dbfs: -24.5, seed: 71, color: "pink" }), at: at(4620) },
    ]);
    const goingOn = new Map<number, boolean>();
    const speaking = new Map<number, boolean>();
    play(
      pcm,
      [
        { reportMs: 1120, type: "start", atMs: 1000 },
        { reportMs: 3300, type: "end", atMs: 3000 },
        { reportMs: 4120, type: "start", atMs: 4000 },
        { reportMs: 5400, type: "end", atMs: 5100 },
      ],
      true,
      (gate, nowMs) => {
        goingOn.set(nowMs, gate.goingOn());
        speaking.set(nowMs, gate.speaking);
      },
    );
    const over = (fromMs: number, toMs: number, map: Map<number, boolean>) =>
      [...map].filter(([ms]) => ms >= fromMs && ms < toMs).map(([, v]) => v);
    expect(over(4200, 4600, goingOn).every(Boolean)).toBe(true);
    // Their voice stopped at 4,600 ms: it goes on for GOING_ON_MS, then the lorry is not it.
    expect(over(4880, 5100, speaking).every(Boolean)).toBe(true);
    expect(over(4880, 5100, goingOn).some(Boolean)).toBe(false);
  });

  it("does not judge digital silence: the detector's word stands", () => {
    const { events } = play(new Int16Array(at(2000)), [
      { reportMs: 400, type: "start", atMs: 400 },
      { reportMs: 1500, type: "end", atMs: 1200 },
    ]);
    expect(events.map(({ type, atMs }) => ({ type, atMs }))).toEqual([
      { type: "start", atMs: 400 },
      { type: "end", atMs: 1200 },
    ]);
  });

  it("switched off, takes every voice the detector hears for the caller's", () => {
    const pcm = mixAt([
      { pcm: hiss(4000) },
      { pcm: voiceSignal({ rate: RATE, ms: 1000, dbfs: -20, f0: 120, seed: 9 }), at: at(500) },
      { pcm: voiceSignal({ rate: RATE, ms: 1000, dbfs: -40, f0: 210, seed: 10 }), at: at(2500) },
    ]);
    const { events } = play(
      pcm,
      [
        { reportMs: 620, type: "start", atMs: 500 },
        { reportMs: 1800, type: "end", atMs: 1500 },
        { reportMs: 2620, type: "start", atMs: 2500 },
        { reportMs: 3800, type: "end", atMs: 3500 },
      ],
      false,
    );
    expect(events.map((e) => e.atMs)).toEqual([500, 1500, 2500, 3500]);
  });
});

describe("level tracking", () => {
  it("a running quantile settles where that share of the levels lies below it", () => {
    const q = new QuantileTracker(0.9, 0.5);
    // Levels spread evenly over -40..-20 dB: the 90th percentile is -22.
    for (let i = 0; i < 20_000; i++) q.push(-40 + ((i * 7919) % 2000) / 100);
    expect(q.value).toBeGreaterThan(-23);
    expect(q.value).toBeLessThan(-21);
  });

  it("a floor is the lowest level of its window; a peak the loudest, fading", () => {
    const floor = new MinimumTracker(8, 4);
    for (let i = 0; i < 8; i++) floor.push(-30 - (i === 3 ? 20 : 0));
    expect(floor.value).toBe(-50);
    // Once the quiet frame has left the window, the floor is the steady level.
    for (let i = 0; i < 8; i++) floor.push(-30);
    expect(floor.value).toBe(-30);
    const peak = new PeakTracker(0.5);
    peak.push(-20);
    peak.push(-40);
    peak.push(-40);
    expect(peak.value).toBe(-21);
    peak.push(-10);
    expect(peak.value).toBe(-10);
  });

  it("a short level is the mean power of the last frames", () => {
    const s = new ShortLevel(4);
    s.push(0.01);
    s.push(0.01);
    s.push(0.01);
    expect(s.push(0.01)).toBeCloseTo(-20, 5);
    expect(s.push(0)).toBeCloseTo(10 * Math.log10(0.0075), 5);
  });

  it("a caller's onsets are heard later the less they stand above the room", () => {
    const heardWith = (roomDb: number) => {
      const level = new CallerLevel();
      for (let i = 0; i < 200; i++) level.room(roomDb, false);
      for (let i = 0; i < 200; i++) level.caller(-20);
      return level.onsetMaskMs();
    };
    expect(new CallerLevel().onsetMaskMs()).toBe(0);
    expect(heardWith(-60)).toBe(0);
    expect(heardWith(-48)).toBe(0);
    const at16 = heardWith(-36);
    const at10 = heardWith(-30);
    expect(at16).toBeGreaterThan(0);
    expect(at10).toBeGreaterThan(at16);
    expect(heardWith(-20)).toBe(heardWith(-24));
    expect(heardWith(-20)).toBeLessThanOrEqual(130);
  });

  it("a room that sounds now and then masks a caller's onsets by how loud it gets, not its median", () => {
    const maskOver = (frames: number, room: (i: number) => number) => {
      const level = new CallerLevel();
      for (let i = 0; i < frames; i++) level.room(room(i), false);
      for (let i = 0; i < 200; i++) level.caller(-20);
      return level.onsetMaskMs();
    };
    const steady = maskOver(600, () => -32);
    // Quiet three seconds in five (its median), as loud as the steady room the other two, and heard
    // last a second into a quiet stretch: its loudness has faded some since.
    const nowAndThen = maskOver(550, (i) => (i % 250 < 150 ? -60 : -32));
    expect(maskOver(600, () => -60)).toBe(0);
    expect(nowAndThen).toBeGreaterThanOrEqual(50);
    expect(nowAndThen).toBeLessThanOrEqual(steady);
  });

  it("a caller's onset must stand above the room's peaks and near their own level", () => {
    const l = new CallerLevel();
    for (let i = 0; i < 500; i++) l.room(-40 + (i % 10) * 0.5); // a room of -40..-35.5 dB
    expect(l.onsetDb()).toBeGreaterThan(-36);
    for (let i = 0; i < 200; i++) l.caller(-18 + (i % 5)); // a caller around -16 dB
    expect(l.callerDb).toBeGreaterThan(-18);
    expect(l.callerDb).toBeLessThan(-14);
    // Near the caller's own level (their onsets rise well above it), whatever the room.
    expect(l.onsetDb()).toBeCloseTo(l.callerDb - 4, 0);
    expect(l.continueDb()).toBeLessThanOrEqual(l.onsetDb());
    expect(l.continueDb()).toBeGreaterThan(l.roomPeakDb);
  });

  it("a caller's level does not follow a sound swelling under it down within one speech", () => {
    const l = new CallerLevel();
    for (let i = 0; i < 200; i++) l.room(-45 + (i % 3), false); // a quiet line
    l.speechStarted();
    for (let i = 0; i < 30; i++) l.caller(-16 + (i % 3) - 1); // "mm hmm" at about -16 dB
    // Then, in the same speech, a lorry's rumble swelling from 2 to 12 dB under it.
    for (let i = 0; i < 40; i++) l.caller(-18 - i * 0.25);
    // No more than LEARN_BELOW_DB under its top, which fades slowly (it went to -27 dB).
    expect(l.callerDb).toBeGreaterThan(-24);
    // In their next speech they are heard at a lower level if that is where they now are.
    l.speechStarted();
    for (let i = 0; i < 60; i++) l.caller(-22 + (i % 3) - 1);
    expect(l.callerDb).toBeLessThan(-20);
  });

  it("a resumption stands above a talking room's peaks, above music's usual loudness only", () => {
    // The same levels: a room at -40 dB whose louder moments (1 frame in 10) reach -32..-29 dB,
    // and twice -24 dB. A talker's room is speech to the detector throughout; music only at those
    // louder moments.
    const resumeOver = (talker: boolean) => {
      const l = new CallerLevel();
      for (let i = 0; i < 500; i++) {
        const loud = i % 10 === 0;
        l.room(loud ? (i % 400 === 0 ? -24 : -32 + ((i / 10) % 4)) : -40, talker || loud);
      }
      for (let i = 0; i < 200; i++) l.caller(-18 + (i % 5)); // a caller around -16 dB
      return l.resumeDb();
    };
    const talker = resumeOver(true);
    const music = resumeOver(false);
    // Over the talker, the room's loudest (-24, faded) and its margin; over music, a few dB lower.
    expect(talker).toBeGreaterThan(-23);
    expect(music).toBeLessThan(talker - 2);
    // Still above what music usually reaches, and no lower than the caller's soft level.
    expect(music).toBeGreaterThan(-31);
  });
});
