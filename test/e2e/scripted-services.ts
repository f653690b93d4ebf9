// Scripted speech services for bridge tests where only the bridge is under test: the agent says
// its greeting (200 ms of audio per sentence) and hears nothing.
import { pino } from "pino";
import { type Bridge, type BridgeOverrides, startBridge } from "../../app/bridge/start.ts";
import { loadConfig } from "../../src/config/config.ts";
import type { SessionServices, TtsEvent } from "../../src/session/services.ts";
import { Channel } from "../session/harness.ts";

export const GREETING = "Hello, this is the test agent.";

/**
 * The environment of a bridge on these services: HTTP and AudioSocket on free loopback ports, no
 * SIP, and a hosted service that is never called (the services are scripted), so no local service.
 */
export function scriptedBridgeEnv(dataDir: string): Record<string, string> {
  return {
    HOST: "127.0.0.1",
    PORT: "0",
    SIP_PORT: "off",
    AUDIOSOCKET_HOST: "127.0.0.1",
    AUDIOSOCKET_PORT: "0",
    SVC_BASE_URL: "http://127.0.0.1:9/v1",
    SVC_API_KEY: "unused",
    SVC_LOCAL_DATA_DIR: dataDir,
  };
}

/** A bridge on these services with `env` (scriptedBridgeEnv's and more); its logs with E2E_LOG set. */
export function startScriptedBridge(
  env: Record<string, string>,
  overrides: BridgeOverrides = {},
): Promise<Bridge> {
  return startBridge(loadConfig({ env }), pino({ level: process.env.E2E_LOG ?? "silent" }), {
    wrapServices: scripted,
    ...overrides,
  });
}

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
