// A speaker's upload ends at the first short silence inside their speech (EARLY_END_MS), before
// the detector's speech-end: the transcript is asked for sooner, and it is the one the turn gets.
// If they go on, the early upload is dropped and the whole utterance sent again.
import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../src/core/clock.ts";
import type { Recognizer, RecognizerStream } from "../../src/session/services.ts";
import { EARLY_END_MS, SpeakerListener } from "../../src/session/speaker-listener.ts";
import type { SpeechEvent } from "../../src/session/speech-detector.ts";

interface Stream {
  samples: number;
  ended: boolean;
  aborted: boolean;
}

function setUp() {
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
    inputRate: 16000,
    createSpeechDetector: (onEvent) => {
      emit = onEvent;
      return { push() {}, onsetPending: () => false, pausedMs: () => paused, close() {} };
    },
    asr,
    clock: new VirtualClock(),
    events: { speechStart() {}, speechEnd: (_l, atMs) => void ends.push(atMs), quietFrame() {} },
    signal: new AbortController().signal,
    turn: { adaptToCaller: false, callerLevelGate: false, prerollMs: 300, noiseSuppression: false },
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
    t.frames(10);
    t.pause(160);
    t.frames(1);
    t.emit({ type: "speech-end", atMs: 700 });
    expect(await t.l.takeUpload()?.end()).toBe("transcript 2");
  });
});
