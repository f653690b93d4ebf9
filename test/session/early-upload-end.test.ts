// A speaker's upload ends at the first short silence inside their speech (EARLY_END_MS), before
// the detector's speech-end: the transcript is asked for sooner, and it is the one the turn gets.
// If they go on, the early upload is dropped and the whole utterance sent again. Over a loud room,
// which keeps the detector in speech, once the caller's own voice has paused (EARLY_END_LOUD_MS).
import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../src/core/clock.ts";
import type { Recognizer, RecognizerStream } from "../../src/session/services.ts";
import { EARLY_END_LOUD_MS, EARLY_END_MS, SpeakerListener } from "../../src/session/speaker-listener.ts";
import type { SpeechEvent } from "../../src/session/speech-detector.ts";
import { HANG_MS } from "../../src/session/voice-end.ts";
import { noise } from "../helpers/noise.ts";
import { mixAt, voiceSignal } from "../helpers/voice-signals.ts";

interface Stream {
  samples: number;
  ended: boolean;
  aborted: boolean;
}

function setUp(callerLevelGate = false, inputRate = 16000) {
  const streams: Stream[] = [];
  const asr: Recognizer = {
    recognize: async () => "",
    open(): RecognizerStream {
      const s: Stream = { samples: 0, ended: false, aborted: false };
      const n = streams.push(s);
      return {
        write: (pcm) => {
          s.samples += pcm.length;
        },
        end: async () => {
          s.ended = true;
          return `transcript ${n}`;
        },
        abort: () => {
          s.aborted = true;
        },
      };
    },
  };
  let emit!: (e: SpeechEvent) => void;
  let paused = 0;
  const ends: number[] = [];
  const l = new SpeakerListener({
    speaker: undefined,
    inputRate,
    createSpeechDetector: (onEvent) => {
      emit = onEvent;
      return { push() {}, onsetPending: () => false, pausedMs: () => paused, close() {} };
    },
    asr,
    clock: new VirtualClock(),
    events: { speechStart() {}, speechEnd: (_l, atMs) => void ends.push(atMs), quietFrame() {} },
    signal: new AbortController().signal,
    turn: { adaptToCaller: false, callerLevelGate, prerollMs: 300, noiseSuppression: false },
  });
  const frames = (n: number) => {
    for (let i = 0; i < n; i++) l.push(new Int16Array(320).fill(2000));
  };
  return {
    l,
    streams,
    ends,
    frames,
    emit: (e: SpeechEvent) => emit(e),
    pause: (ms: number) => {
      paused = ms;
    },
  };
}

describe("the upload's early end", () => {
  it("ends the upload at a short silence, and the turn gets that transcript at speech-end", async () => {
    const t = setUp();
    t.emit({ type: "speech-start", atMs: 0 });
    t.frames(20);
    expect(t.streams).toHaveLength(1);
    t.pause(EARLY_END_MS - 32);
    t.frames(1);
    expect(t.streams[0]!.ended).toBe(false);
    t.pause(EARLY_END_MS);
    t.frames(1);
    expect(t.streams[0]!.ended).toBe(true); // before the detector's speech-end
    t.pause(128);
    t.frames(3);
    t.emit({ type: "speech-end", atMs: 420 });
    expect(t.ends).toEqual([420]);
    const upload = t.l.takeUpload();
    expect(upload?.ended).toBe(true);
    expect(await upload?.end()).toBe("transcript 1");
    expect(t.streams).toHaveLength(1); // one request for the utterance
    expect(t.l.earlyEndsDropped).toBe(0);
    expect(t.l.levels().resentUtterances).toBe(0);
  });

  it("sends the whole utterance again when the speaker goes on after the early end", async () => {
    const t = setUp();
    t.emit({ type: "speech-start", atMs: 0 });
    t.frames(20);
    t.pause(EARLY_END_MS);
    t.frames(1);
    expect(t.streams[0]!.ended).toBe(true);
    t.pause(0); // they went on
    t.frames(1);
    expect(t.streams[0]!.aborted).toBe(true);
    expect(t.streams).toHaveLength(2);
    // From the utterance's start again, not from where the first stopped.
    expect(t.streams[1]!.samples).toBeGreaterThanOrEqual(t.streams[0]!.samples);
    expect(t.l.earlyEndsDropped).toBe(1);
    // The call's record and /metrics count it (voice_bridge_utterances_resent_total).
    expect(t.l.levels().resentUtterances).toBe(1);
    t.frames(10);
    t.pause(160);
    t.frames(1);
    t.emit({ type: "speech-end", atMs: 700 });
    expect(await t.l.takeUpload()?.end()).toBe("transcript 2");
  });

  it("over a loud room, ends the upload once the caller's own voice has paused, cut where it ended", () => {
    // A talker 16 dB under the caller from the call's first frame keeps the detector in speech
    // (it never pauses); the caller speaks from 3 s to 5 s.
    const rate = 8000;
    const at = (ms: number) => (ms * rate) / 1000;
    const pcm = mixAt([
      { pcm: noise(9000, rate, { dbfs: -60, seed: 11 }) },
      { pcm: voiceSignal({ rate, ms: 9000, dbfs: -36, f0: 200, seed: 2 }) },
      { pcm: voiceSignal({ rate, ms: 2000, dbfs: -20, f0: 110, seed: 3, pauseShare: 0.1 }), at: at(3000) },
    ]);
    const t = setUp(true, rate);
    let nowMs = 0;
    const endedAt = new Map<number, number>();
    for (let i = 0; i + 160 <= pcm.length; i += 160) {
      if (nowMs === 120) t.emit({ type: "speech-start", atMs: 0 });
      t.l.push(pcm.subarray(i, i + 160));
      nowMs += 20;
      t.streams.forEach((s, k) => {
        if (s.ended && !s.aborted && !endedAt.has(k)) endedAt.set(k, nowMs);
      });
      if (t.ends.length > 0) break;
    }
    // The caller's speech ended with their voice (HANG_MS after it); their upload before that.
    expect(t.ends).toHaveLength(1);
    const last = t.streams.length - 1;
    const ended = endedAt.get(last);
    expect(ended).toBeDefined();
    expect(ended!).toBeGreaterThanOrEqual(5000);
    expect(ended!).toBeLessThan(5000 + EARLY_END_LOUD_MS + 150);
    expect(nowMs).toBeGreaterThan(ended! + HANG_MS - EARLY_END_LOUD_MS - 100);
    // It carried the caller's words, up to 0.1 s after their voice (heard until ~5.05 s), not the
    // room's talk until the pause was theirs (~5.25 s). (The utterance began with the detector's
    // speech, at the call's start.)
    const sentMs = (t.streams[last]!.samples / 16000) * 1000;
    expect(sentMs).toBeGreaterThan(5000);
    expect(sentMs).toBeLessThan(5200);
  });
});
