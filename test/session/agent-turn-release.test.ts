// A turn that ends before its TTS session has opened must close that session when it arrives:
// nobody else holds it, and an open session (a WebSocket, the service's synthesis state) per
// cut-short turn is what a long call would pile up.
import { describe, expect, it } from "vitest";
import { flushMicrotasks, VirtualClock } from "../../src/core/clock.ts";
import { AgentTurn } from "../../src/session/agent-turn.ts";
import type { TtsEvent, TtsStream } from "../../src/session/services.ts";
import { ToolBox } from "../../src/session/tools.ts";
import { Channel, VirtualTransport } from "./harness.ts";

function pendingTts(): { open: () => Promise<TtsStream>; resolve: () => void; stream: { closed: boolean } } {
  const events = new Channel<TtsEvent>();
  const stream = {
    closed: false,
    sendText() {},
    flush() {},
    close() {
      stream.closed = true;
      events.close();
    },
    events,
  };
  let resolve!: () => void;
  const opened = new Promise<TtsStream>((r) => {
    resolve = () => r(stream);
  });
  return { open: () => opened, resolve, stream };
}

describe("AgentTurn and its TTS session", () => {
  for (const how of ["cancel", "interrupt"] as const) {
    it(`closes a session that opens after the turn was ${how === "cancel" ? "cancelled" : "interrupted"}`, async () => {
      const clock = new VirtualClock();
      const tts = pendingTts();
      const turn = new AgentTurn(
        {
          chat: {
            async *stream() {
              yield { type: "text", text: "Hello there." };
            },
          },
          openTts: tts.open,
          tools: new ToolBox([]),
          transport: new VirtualTransport(clock),
          clock,
        },
        [{ role: "user", content: "hi" }],
        { held: how === "cancel" },
      );
      const done = turn.start();
      await flushMicrotasks();
      turn[how]();
      const r = await done;
      expect(how === "cancel" ? r.cancelled : r.interrupted).toBe(true);
      expect(tts.stream.closed).toBe(false);
      tts.resolve();
      await flushMicrotasks();
      expect(tts.stream.closed).toBe(true);
    });
  }
});
