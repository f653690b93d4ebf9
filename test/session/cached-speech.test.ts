// Words kept ready (the apology, the waiting cue) on a scripted synthesizer: all of their
// sentences, however many the service cuts them into, and another session when one is dropped
// before they are whole.
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { CachedSpeech } from "../../src/session/cached-speech.ts";
import type { SpeechSynthesizer, TtsEvent, TtsStream } from "../../src/session/services.ts";
import { Channel, RATE, spokenAudio } from "./harness.ts";

const TEXT = "Sorry, I'm having trouble on my side. Could you say that again?";
const FORMAT = { kind: "pcm", rate: RATE } as const;

/** Sessions that speak each sentence as it is sent; those listed in `cut` are dropped after their first audio. */
function synthesizer(cut: number[]): SpeechSynthesizer & { opened: number } {
  const synth = {
    opened: 0,
    async open(): Promise<TtsStream> {
      const n = synth.opened++;
      const events = new Channel<TtsEvent>();
      let closed = false;
      const say = (sentence: string) => {
        const audio = spokenAudio(sentence);
        events.push({ type: "sentence-start", text: sentence });
        events.push({ type: "audio", audio: audio.slice(0, 800), durationMs: 100 });
        if (cut.includes(n)) {
          events.close(new Error("tts: connection closed before the session finished (code 1011)"));
          return;
        }
        events.push({ type: "audio", audio: audio.slice(800), durationMs: (audio.length - 800) / 8 });
        events.push({ type: "sentence-end", text: sentence });
      };
      return {
        get closed() {
          return closed;
        },
        events,
        // The first sentence as soon as it is whole, the rest at the flush (as E5's default mode).
        sendText: (text) => say(text.slice(0, text.indexOf(".") + 1)),
        flush: () => {
          events.push({ type: "flushed" });
          say(TEXT.slice(TEXT.indexOf(".") + 2));
        },
        close: () => {
          closed = true;
          events.close();
        },
      };
    },
  };
  return synth;
}

describe("CachedSpeech", () => {
  it("keeps every sentence of the words, not only the first", async () => {
    const speech = new CachedSpeech(TEXT, FORMAT);
    await speech.prepare(synthesizer([]), pino({ level: "silent" }));
    expect(speech.audio).toEqual(spokenAudio(TEXT));
  });

  it("tries another session when one is dropped before the words are whole", async () => {
    const synth = synthesizer([0]);
    const speech = new CachedSpeech(TEXT, FORMAT);
    await speech.prepare(synth, pino({ level: "silent" }));
    expect(synth.opened).toBe(2);
    expect(speech.audio).toEqual(spokenAudio(TEXT));
  });

  it("goes without them after three dropped sessions, and says so", async () => {
    const synth = synthesizer([0, 1, 2]);
    const speech = new CachedSpeech(TEXT, FORMAT);
    const warned: string[] = [];
    await speech.prepare(synth, pino({ level: "warn" }, { write: (l: string) => void warned.push(l) }));
    expect(synth.opened).toBe(3);
    expect(speech.audio).toBeUndefined();
    expect(warned).toHaveLength(1);
  });
});
