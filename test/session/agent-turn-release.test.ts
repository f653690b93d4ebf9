// A turn that ends before its TTS session has opened must close that session when it arrives:
// nobody else holds it, and an open session (a WebSocket, the service's synthesis state) per
// cut-short turn is what a long call would pile up.
import { describe, expect, it } from "vitest";
import { flushMicrotasks, VirtualClock } from "../../src/core/clock.ts";
import { AgentTurn } from "../../src/session/agent-turn.ts";
import type { ChatModel, TtsEvent, TtsStream } from "../../src/session/services.ts";
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

describe("AgentTurn and its chat", () => {
  function turnWith(chat: ChatModel, open: () => Promise<TtsStream>, clock: VirtualClock): AgentTurn {
    return new AgentTurn(
      { chat, openTts: open, tools: new ToolBox([]), transport: new VirtualTransport(clock), clock },
      [{ role: "user", content: "hi" }],
      { held: false },
    );
  }

  it("asks the chat before its TTS session has opened, and sends the text once it has", async () => {
    const clock = new VirtualClock();
    const events = new Channel<TtsEvent>();
    const sent: string[] = [];
    const stream: TtsStream = {
      closed: false,
      sendText: (t) => void sent.push(t),
      flush: () => events.push({ type: "flushed" }),
      close: () => events.close(),
      events,
    };
    let opened!: () => void;
    const open = () => new Promise<TtsStream>((r) => (opened = () => r(stream)));
    let asked = 0;
    const turn = turnWith(
      {
        async *stream() {
          asked++;
          yield { type: "text", text: "Hello " };
          yield { type: "text", text: "there." };
        },
      },
      open,
      clock,
    );
    void turn.start();
    await flushMicrotasks();
    expect(asked).toBe(1); // the chat did not wait for the session
    expect(turn.timings.firstTokenAt).toBeDefined();
    expect(sent).toEqual([]);
    opened();
    await flushMicrotasks();
    expect(sent.join("")).toBe("Hello there.");
    turn.interrupt();
  });

  // Retries, hedges and fallbacks are the chat port's, within the turn's budget (#54): a turn
  // that sent its request again itself would put a second round trip on top of them.
  for (const status of [400, 503]) {
    it(`fails the turn on a chat refused with ${status}, after its one request`, async () => {
      const clock = new VirtualClock();
      const tts = pendingTts();
      let asked = 0;
      const turn = turnWith(
        {
          // biome-ignore lint/correctness/useYield: it fails before its first chunk
          async *stream() {
            asked++;
            throw Object.assign(new Error(`HTTP ${status}`), { status });
          },
        },
        tts.open,
        clock,
      );
      const done = turn.start();
      tts.resolve();
      const r = await done;
      expect(r.error).toBe(`HTTP ${status}`);
      expect(asked).toBe(1);
      expect(turn.chatRequests).toBe(1);
      await flushMicrotasks();
      expect(tts.stream.closed).toBe(true);
    });
  }
});
