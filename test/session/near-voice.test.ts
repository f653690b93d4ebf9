// The listener hands its speech detector the caller's gate's word on where the audio stands out
// as a near voice over a loud room (the detector takes such a stretch for speech on less
// evidence): on a phone's one stream, not in a voice channel's own stream per member.
import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../src/core/clock.ts";
import type { Recognizer } from "../../src/session/services.ts";
import { SpeakerListener } from "../../src/session/speaker-listener.ts";
import type { NearVoice, NearWindow } from "../../src/session/speech-detector.ts";
import type { Speaker } from "../../src/session/transport.ts";
import { noise } from "../helpers/noise.ts";
import { mixAt, voiceSignal } from "../helpers/voice-signals.ts";

const RATE = 16000;
const FRAME = 320;

const asr: Recognizer = {
  recognize: async () => "",
  open: () => ({ write() {}, end: async () => "", abort() {} }),
};

/** Plays `pcm` to a listener; returns the near-voice judgement its detector was given. */
function play(pcm: Int16Array, speaker: Speaker | undefined): NearVoice | undefined {
  let near: NearVoice | undefined;
  const l = new SpeakerListener({
    speaker,
    inputRate: RATE,
    createSpeechDetector: (_onEvent, n) => {
      near = n;
      return { push() {}, onsetPending: () => false, close() {} };
    },
    asr,
    clock: new VirtualClock(),
    events: { speechStart() {}, speechEnd() {}, quietFrame() {} },
    signal: new AbortController().signal,
    turn: { adaptToCaller: false, callerLevelGate: true, prerollMs: 300, noiseSuppression: false },
  });
  for (let s = 0; s + FRAME <= pcm.length; s += FRAME) l.push(pcm.slice(s, s + FRAME));
  return near;
}

describe("the near voice the detector is told of", () => {
  // 4 s of a loud room (pink noise), the caller 10 dB over it in its last second.
  const pcm = mixAt([
    { pcm: noise(4000, RATE, { dbfs: -30, seed: 51, color: "pink" }) },
    {
      pcm: voiceSignal({ rate: RATE, ms: 1000, dbfs: -20, f0: 120, seed: 52, pauseShare: 0 }),
      at: 3000 * 16,
    },
  ]);

  it("is the caller's gate's on a phone's stream: their voice over the room, not the room", () => {
    const near = play(pcm, undefined);
    expect(near).toBeDefined();
    const windows = (from: number, to: number) => {
      const said: NearWindow[] = [];
      for (let ms = from; ms + 32 <= to; ms += 32) said.push(near!(ms, ms + 32, 0));
      return said;
    };
    expect(windows(3100, 3900).filter(Boolean).length).toBeGreaterThan(12);
    // The room alone: not near.
    expect(windows(1500, 2900).some(Boolean)).toBe(false);
  });

  it("is never so in a voice channel, where each member has their own stream", () => {
    const near = play(pcm, { id: "member-1", name: "Sam" });
    expect(near).toBeDefined();
    expect(near!(3200, 3232, 0)).toBe(false);
  });
});
