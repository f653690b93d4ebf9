// Handoff from the TypeScript API (#56), in-process (createBridge) through the Twilio simulator and
// the real local service: a code tool's ctx.handoff and an onTurn hook's call.handoff hand the call
// to another of the agent's `handoffs`, whose line is heard and whose hooks hear the turns after it;
// an agent outside the handoffs is refused with an error naming them.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import {
  type CallRecord,
  type CallTurn,
  createBridge,
  defineAgent,
  tool,
  type VoiceBridge,
  z,
} from "../../../app/index.ts";
import { simulateCall } from "../../../tools/twilio-sim/simulate.ts";

let dir: string;
let bridge: VoiceBridge;
const salesTurns: CallTurn[] = [];
const refused: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-api-handoff-"));
  const scripted = join(dir, "scripted.yaml");
  writeFileSync(
    scripted,
    stringify({
      name: "handoff api line",
      greeting: "Hello.",
      fallback: "Press a key.",
      rules: [
        {
          intent: "route",
          when: ["keypad: 1\\b"],
          reply: "Routing you.",
          tool: { name: "route_caller", arguments: {} },
          without_tool: "No routing here.",
          after_tool: "",
        },
      ],
    }),
  );
  const support = defineAgent({
    greeting: "Support line.",
    handoffs: ["sales"],
    tools: [
      tool({
        name: "route_caller",
        description: "Routes the caller to sales",
        parameters: z.object({}),
        execute: (_args, ctx) => {
          ctx.handoff("sales", "routed by code");
          return "routed";
        },
      }),
    ],
    onTurn: (turn, call) => {
      // Keys 3: the hook hands the call on (after trying an agent it may not hand calls to).
      if (turn.role !== "user" || !turn.text.includes("keypad: 3")) return;
      try {
        call.handoff("billing");
      } catch (err) {
        refused.push((err as Error).message);
      }
      call.handoff("sales", "the hook saw keys 3");
    },
  });
  const sales = defineAgent({
    handoffLine: "Sales desk.",
    onTurn: (turn) => {
      salesTurns.push(turn);
    },
  });
  bridge = await createBridge({
    env: {},
    server: { host: "127.0.0.1", port: 0 },
    sip: { port: "off" },
    local: { dataDir: join(dir, "data"), scriptedAgent: scripted, scriptedPaceMs: 0 },
    agent: support,
    agents: { sales, billing: { greeting: "Billing." } },
    log: { level: (process.env.E2E_LOG as "info" | undefined) ?? "silent" },
  });
}, 60_000);

afterAll(async () => {
  await bridge?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function callWithKey(digit: string): Promise<CallRecord> {
  const r = await simulateCall({
    url: bridge.url,
    bridgeToken: bridge.token,
    to: "+15551000",
    dtmf: [
      { digit, atMs: 2500 },
      { digit: "#", atMs: 2550 },
    ],
    hangUpAfterMs: 2500,
    maxSeconds: 20,
  });
  return r.transcript as CallRecord;
}

const heard = (record: CallRecord) =>
  record.turns.flatMap((t) => (t.role === "assistant" ? [{ text: t.text, agent: t.agent }] : []));

describe("handoff from code", () => {
  it("a code tool's ctx.handoff hands the call on once its words are heard", async () => {
    const record = await callWithKey("1");
    expect(heard(record)).toEqual([
      { text: "Support line.", agent: undefined },
      { text: "Routing you.", agent: undefined },
      { text: "Sales desk.", agent: "sales" },
    ]);
    expect(record.events.filter((e) => e.type === "handoff")).toEqual([
      expect.objectContaining({ from: "default", to: "sales", reason: "routed by code" }),
    ]);
    // The sales agent's hook hears the turns it had.
    expect(salesTurns.filter((t) => t.callId === record.callId).map((t) => t.text)).toEqual(["Sales desk."]);
  }, 40_000);

  it("an onTurn hook's call.handoff hands the call on; an agent outside the handoffs is refused", async () => {
    const record = await callWithKey("3");
    expect(refused).toEqual(['handoff: agent "default" may hand calls to sales, not "billing"']);
    expect(record.events.filter((e) => e.type === "handoff")).toEqual([
      expect.objectContaining({ from: "default", to: "sales", reason: "the hook saw keys 3" }),
    ]);
    // The reply to the keys was heard before sales took the call.
    const said = heard(record);
    expect(said.at(-1)).toEqual({ text: "Sales desk.", agent: "sales" });
    expect(said.slice(0, -1).every((t) => t.agent === undefined)).toBe(true);
    expect(said.length).toBeGreaterThanOrEqual(3);
  }, 40_000);
});
