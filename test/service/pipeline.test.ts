// The generation pipeline between an engine and the renderers: token counts, the output budget,
// stop sequences across deltas, one stop per block and one finish, engine failures as error events.
// The engine here replays a fixed list of batches (a test driver for the pipeline, not a stub of it).
import { describe, expect, it } from "vitest";
import type { ChatEngine } from "../../src/service/engines/chat/engine.ts";
import { collect } from "../../src/service/generation/collect.ts";
import type { GenBatch, GenEvent } from "../../src/service/generation/events.ts";
import { startGeneration } from "../../src/service/generation/pipeline.ts";
import type { GenRequest } from "../../src/service/generation/request.ts";
import { StopScanner } from "../../src/service/generation/stop-scanner.ts";
import { countTokens } from "../../src/service/generation/tokens.ts";

function replay(batches: GenBatch[], failAt?: number): ChatEngine & { stoppedAt: number | undefined } {
  const engine = {
    name: "replay",
    stoppedAt: undefined as number | undefined,
    async open() {
      return (async function* () {
        let i = 0;
        try {
          for (; i < batches.length; i++) {
            if (i === failAt) throw new Error("model crashed");
            yield batches[i]!;
          }
        } finally {
          if (i < batches.length) engine.stoppedAt = i;
        }
      })();
    },
  };
  return engine;
}

const words = (text: string, kind: "text" | "reasoning" = "text", block = 0): GenEvent[][] => {
  const pieces = text.match(/\s*\S+/g)!;
  return pieces.map((p, i) => [
    ...(i === 0 ? [{ type: "block_start", block, kind } as GenEvent] : []),
    { type: "delta", block, text: p },
  ]);
};
const req = (patch: Partial<GenRequest> = {}): GenRequest => ({
  model: "svc-3.7-flash",
  messages: [{ role: "user", parts: [{ type: "text", text: "hi" }] }],
  tools: [],
  stop: [],
  output: { kind: "text" },
  ...patch,
});
const events = async (engine: ChatEngine, r: GenRequest) => {
  const gen = await startGeneration(engine, r, new AbortController().signal);
  const out: GenEvent[] = [];
  for await (const b of gen.batches) out.push(...b);
  return out;
};

describe("pipeline", () => {
  const TEXT = "The quick brown fox jumps over the lazy dog.";

  it("counts tokens per delta, closes the open block and adds usage and finish", async () => {
    const evs = await events(replay(words(TEXT)), req());
    const deltas = evs.filter((e) => e.type === "delta");
    expect(deltas.map((d) => d.tokens)).toEqual(deltas.map((d) => countTokens(d.text)));
    expect(evs.slice(-3).map((e) => e.type)).toEqual(["block_stop", "usage", "finish"]);
    const usage = evs.find((e) => e.type === "usage");
    expect(usage).toMatchObject({ usage: { outputTokens: countTokens(TEXT), reasoningTokens: 0 } });
  });

  it("stops at the budget mid-delta with finish length, and stops the engine", async () => {
    const engine = replay(words(TEXT));
    const r = await collect(
      (await startGeneration(engine, req({ maxTokens: 3 }), new AbortController().signal)).batches,
      0,
    );
    expect(r.finish).toBe("length");
    expect(r.usage.outputTokens).toBe(3);
    expect(r.blocks).toEqual([{ kind: "text", text: "The quick brown" }]);
    expect(engine.stoppedAt).toBe(3);
  });

  it("spends the budget on reasoning first", async () => {
    const batches = [
      ...words("Let me think about it", "reasoning", 0),
      [{ type: "block_stop", block: 0 } as GenEvent],
      ...words(TEXT, "text", 1),
    ];
    const r = await collect(
      (await startGeneration(replay(batches), req({ maxTokens: 4 }), new AbortController().signal)).batches,
      0,
    );
    expect(r.blocks).toEqual([{ kind: "reasoning", text: "Let me think about" }]);
    expect(r.usage.reasoningTokens).toBe(4);
  });

  it("finds a stop sequence split over deltas and keeps it out of the text", async () => {
    const r = await collect(
      (await startGeneration(replay(words(TEXT)), req({ stop: ["fox jumps"] }), new AbortController().signal))
        .batches,
      0,
    );
    expect(r.blocks).toEqual([{ kind: "text", text: "The quick brown " }]);
    expect(r).toMatchObject({ finish: "stop", stopSequence: "fox jumps" });
  });

  it("turns a finish after a tool call into tool_calls, and an engine crash into an error event", async () => {
    const tool: GenBatch[] = [
      [
        { type: "block_start", block: 0, kind: "tool_call", callId: "c", name: "f" },
        { type: "delta", block: 0, text: "{}" },
      ],
      [
        { type: "block_stop", block: 0 },
        { type: "finish", reason: "stop" },
      ],
    ];
    expect(
      (await collect((await startGeneration(replay(tool), req(), new AbortController().signal)).batches, 0))
        .finish,
    ).toBe("tool_calls");
    const evs = await events(replay(words(TEXT), 2), req());
    expect(evs[evs.length - 1]).toEqual({ type: "error", message: "generation failed: model crashed" });
  });
});

describe("StopScanner", () => {
  it("holds back a possible start of a stop sequence until it is decided", () => {
    const s = new StopScanner(["END", "xyz"]);
    expect(s.push("abcE")).toEqual({ emit: "abc" });
    expect(s.push("N")).toEqual({ emit: "" });
    expect(s.push("Dx")).toEqual({ emit: "", matched: "END" });
    const t = new StopScanner(["END"]);
    expect(t.push("a E")).toEqual({ emit: "a " });
    expect(t.push("nd")).toEqual({ emit: "End" });
    expect(t.push("EN")).toEqual({ emit: "" });
    expect(t.flush()).toBe("EN");
  });
});
