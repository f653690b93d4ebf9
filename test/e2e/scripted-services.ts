// Scripted speech services for bridge tests where only the bridge is under test: the agent says
// its greeting (200 ms of audio per sentence) and hears nothing.
import type { SessionServices, TtsEvent } from "../../src/session/services.ts";
import { Channel } from "../session/harness.ts";

export const GREETING = "Hello, this is the test agent.";

/** Scripted services: the agent says GREETING (200 ms of audio per sentence), hears nothing. */
export const scripted = (): SessionServices => ({
  asr: {
    recognize: async () => "",
    open: () => ({ write() {}, end: async () => "", abort() {} }),
  },
  chat: {
    async *stream() {
      yield { type: "text", text: GREETING };
    },
  },
  tts: {
    async open(format) {
      const events = new Channel<TtsEvent>();
      let text = "";
      let closed = false;
      return {
        sendText: (t: string) => {
          text += t;
        },
        flush: () => {
          const sentence = text.trim();
          text = "";
          if (sentence && format.kind === "pcm") {
            events.push({ type: "sentence-start", text: sentence });
            const audio = new Int16Array(format.rate / 5).fill(1000);
            events.push({ type: "audio", audio, durationMs: 200 });
            events.push({ type: "sentence-end", text: sentence });
          }
          events.push({ type: "flushed" });
        },
        close: () => {
          closed = true;
          events.close();
        },
        get closed() {
          return closed;
        },
        events,
      };
    },
  },
});
