// Agents written in code, in-process (createBridge, no package): through the Twilio simulator and
// the real local service, keypad digits make the scripted chat engine call TypeScript tools. A tool's
// result (read from the caller's variables, which onCallStart gave) is spoken; one that throws, one
// that outlives its time limit, and one the caller talks over (its signal fires) are each told to
// the model; the hooks hear the turns and the record.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import {
  type CallRecord,
  type CallStartRequest,
  type CallTurn,
  createBridge,
  defineAgent,
  type ToolContext,
  tool,
  type VoiceBridge,
  z,
} from "../../../app/index.ts";
import { simulateCall } from "../../../tools/twilio-sim/simulate.ts";
import { buildScene } from "../../helpers/speech.ts";

let dir: string;
let bridge: VoiceBridge;
const asked: CallStartRequest[] = [];
const turns: CallTurn[] = [];
const ended: CallRecord[] = [];
const interrupted: { reason: unknown; at: number }[] = [];
const contexts: ToolContext["call"][] = [];

/** A rule of the scripted chat engine: this keypad digit makes the model call this tool. */
const keypadRule = (digit: string, name: string, reply: string) => ({
  intent: name,
  when: [`keypad: ${digit}\\b`],
  reply,
  tool: { name, arguments: { order_id: "42" } },
  without_tool: "No tool.",
  after_tool: "Result: {result}",
});

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-api-"));
  const scripted = join(dir, "scripted.yaml");
  writeFileSync(
    scripted,
    stringify({
      name: "api test line",
      greeting: "Hello.",
      fallback: "Press a key.",
      rules: [
        { ...keypadRule("1", "lookup_order", "Let me check."), after_tool: "Order 42 is {result.status}." },
        keypadRule("2", "broken_tool", "Checking."),
        keypadRule("3", "slow_tool", "Checking."),
        { ...keypadRule("5", "settle_tool", "Done."), after_tool: "" },
        { ...keypadRule("6", "handover_tool", "Passing you on."), after_tool: "" },
        keypadRule(
          "4",
          "patient_tool",
          "Let me look that up for you, it will take a little while, please hold on.",
        ),
      ],
    }),
  );
  const orders = defineAgent({
    greeting: "Orders line. Hello {{var.customer}}.",
    tools: [
      tool({
        name: "lookup_order",
        description: "Looks up an order by its number",
        parameters: z.object({ order_id: z.string().describe("the order number") }),
        execute: async ({ order_id }, ctx) => {
          contexts.push(ctx.call);
          ctx.say("One moment.");
          return { order: order_id, status: `shipped to ${ctx.call.variables.customer}` };
        },
      }),
      tool({
        name: "broken_tool",
        description: "Always fails",
        parameters: z.object({ order_id: z.string() }),
        execute: () => {
          throw new Error("the order database is down");
        },
      }),
      tool({
        name: "slow_tool",
        description: "Never answers",
        parameters: z.object({ order_id: z.string() }),
        timeoutMs: 300,
        execute: () => new Promise(() => {}),
      }),
      tool({
        name: "settle_tool",
        description: "Settles the order and ends the call",
        parameters: z.object({ order_id: z.string() }),
        execute: (_args, ctx) => {
          ctx.hangUp("the order is settled");
          return "settled";
        },
      }),
      tool({
        name: "handover_tool",
        description: "Hands the caller to the orders desk",
        parameters: z.object({ order_id: z.string() }),
        execute: (_args, ctx) => {
          ctx.transfer("+15559990000");
          return "handed over";
        },
      }),
      tool({
        name: "patient_tool",
        description: "Answers after the caller hangs on",
        parameters: z.object({ order_id: z.string() }),
        timeoutMs: 30_000,
        execute: (_args, ctx) =>
          new Promise((resolve) => {
            const started = Date.now();
            ctx.signal.addEventListener("abort", () => {
              interrupted.push({ reason: ctx.signal.reason, at: Date.now() - started });
              resolve("too late");
            });
          }),
      }),
    ],
    onCallStart: (call) => {
      asked.push(call);
      if (call.from === "+15550000666") return { reject: { reason: "blocked number" } };
      return { variables: { customer: "Ada" } };
    },
    onTurn: (turn) => {
      turns.push(turn);
    },
    onCallEnd: (record) => {
      ended.push(record);
    },
  });
  bridge = await createBridge({
    env: {},
    server: { host: "127.0.0.1", port: 0 },
    sip: { port: "off" },
    local: { dataDir: join(dir, "data"), scriptedAgent: scripted, scriptedPaceMs: 0 },
    agents: { orders },
    routes: [{ to: "+15551000", agent: "orders" }],
    log: { level: (process.env.E2E_LOG as "info" | undefined) ?? "silent" },
  });
}, 60_000);

afterAll(async () => {
  await bridge?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const assistantTurns = (record: CallRecord) => record.turns.filter((t) => t.role === "assistant");

async function callWithKey(digit: string, extra: Parameters<typeof simulateCall>[0] = { url: "" }) {
  const r = await simulateCall({
    from: "+15550001234",
    to: "+15551000",
    dtmf: [
      { digit, atMs: 2500 },
      { digit: "#", atMs: 2550 },
    ],
    hangUpAfterMs: 2500,
    maxSeconds: 20,
    ...extra,
    url: bridge.url,
    bridgeToken: bridge.token,
  });
  return r.transcript as CallRecord;
}

describe("tools written in TypeScript", () => {
  it("the tool reads the caller's variables from onCallStart; its result is spoken; the hooks hear it", async () => {
    const record = await callWithKey("1");
    expect(record.agent).toBe("orders");
    expect(asked.at(-1)).toMatchObject({
      transport: "twilio",
      from: "+15550001234",
      to: "+15551000",
      agent: "orders",
    });
    const [greeting, answer] = assistantTurns(record);
    expect(greeting?.role === "assistant" && greeting.generated).toBe("Orders line. Hello Ada.");
    expect(answer).toMatchObject({ tools: ["lookup_order"] });
    expect(answer?.role === "assistant" && answer.generated).toContain("One moment.");
    expect(answer?.role === "assistant" && answer.generated).toContain("Order 42 is shipped to Ada.");
    const call = record.events.find((e) => e.type === "assistant" && e.toolCalls.length > 0);
    expect(call?.type === "assistant" && JSON.parse(call.toolCalls[0]!.arguments)).toEqual({
      order_id: "42",
    });
    expect(contexts.at(-1)).toMatchObject({
      id: record.callId,
      transport: "twilio",
      from: "+15550001234",
      to: "+15551000",
      variables: { customer: "Ada" },
    });
    await expect.poll(() => ended.find((r) => r.callId === record.callId)?.endedAt).toBeDefined();
    const heard = turns.filter((t) => t.callId === record.callId).map((t) => t.role);
    expect(heard).toEqual(["assistant", "user", "assistant"]);
  }, 30_000);

  it("a tool that throws: the model is told the error and says so", async () => {
    const record = await callWithKey("2");
    const answer = assistantTurns(record)[1];
    expect(answer).toMatchObject({ tools: ["broken_tool"] });
    expect(answer?.role === "assistant" && answer.generated).toContain(
      "error: the broken_tool tool failed: the order database is down",
    );
  }, 30_000);

  it("a tool that outlives its timeout: the model is told it did not answer", async () => {
    const record = await callWithKey("3");
    const answer = assistantTurns(record)[1];
    expect(answer?.role === "assistant" && answer.generated).toContain(
      "error: the slow_tool tool did not answer within 300 ms",
    );
  }, 30_000);

  it("a tool the caller talks over: its signal fires at the barge-in, and the reply stops", async () => {
    // The caller speaks while the reply before the tool plays and the tool waits.
    const scene = buildScene([{ silenceMs: 4200 }, { say: "wait, I have another question about my bill" }], {
      rate: 8000,
    });
    const before = interrupted.length;
    const record = await callWithKey("4", { url: "", caller: { samples: scene.pcm, rate: 8000 } });
    expect(interrupted.length).toBe(before + 1);
    expect(interrupted.at(-1)!.at).toBeLessThan(10_000);
    const answer = assistantTurns(record)[1];
    expect(answer).toMatchObject({ tools: ["patient_tool"], interrupted: true });
    expect(answer?.role === "assistant" && answer.generated).not.toContain("too late");
    expect(record.events.some((e) => e.type === "barge-in" && e.outcome === "interrupted")).toBe(true);
  }, 30_000);

  it("a tool running when the caller hangs up: its signal fires", async () => {
    const before = interrupted.length;
    const started = Date.now();
    const record = await callWithKey("4", { url: "", maxSeconds: 6 });
    await expect.poll(() => interrupted.length).toBe(before + 1);
    // At the hang-up (6 s into the call), long before the tool's 30 s limit.
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(record.endReason).toBe("stop");
    expect(assistantTurns(record)[1]).toMatchObject({ tools: ["patient_tool"] });
  }, 30_000);

  it("a tool can hang up, or transfer, once the agent's words are heard", async () => {
    const settled = await callWithKey("5");
    expect(settled.endReason).toBe("agent: the order is settled");
    expect(assistantTurns(settled)[1]).toMatchObject({ tools: ["settle_tool"], interrupted: false });
    // Twilio's REST API is out of reach here: the transfer is tried (and fails, so the model is told).
    const handed = await callWithKey("6");
    expect(
      handed.events.some((e) => e.type === "note" && /^transfer(red)? to \+15559990000/.test(e.text)),
    ).toBe(true);
  }, 40_000);

  it("onCallStart can reject the call, as the webhook does", async () => {
    await expect(
      simulateCall({ url: bridge.url, from: "+15550000666", to: "+15551000", maxSeconds: 5 }),
    ).rejects.toThrow(/reject/i);
  }, 15_000);
});
