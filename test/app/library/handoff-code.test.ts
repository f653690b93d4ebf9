// Handoff and transfer from the TypeScript API (#56), in-process (createBridge) through the Twilio
// simulator (its REST API too) and the real local service: a code tool's ctx.handoff and an onTurn
// hook's call.handoff hand the call to another of the agent's `handoffs`, whose line is heard and
// whose hooks hear the turns after it; an agent outside the handoffs is refused with an error naming
// them. A hook's call.transfer transfers the call once the reply is heard; a bad request is refused.
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
import { SimulatedRestApi } from "../../../tools/twilio-sim/rest-api.ts";
import { newCallSid, simulateCall } from "../../../tools/twilio-sim/simulate.ts";

const ACCOUNT = `AC${"5".repeat(32)}`;
const TOKEN = "handoff-code-token";

let dir: string;
let bridge: VoiceBridge;
let rest: SimulatedRestApi;
const salesTurns: CallTurn[] = [];
const refused: string[] = [];
const transferRefused: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-api-handoff-"));
  rest = await SimulatedRestApi.start(ACCOUNT, TOKEN);
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
        { intent: "desk", when: ["keypad: 5\\b"], reply: "Putting you through to the desk." },
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
      // Keys 5: the hook transfers the call (after two requests it may not make).
      if (turn.role === "user" && turn.text.includes("keypad: 5")) {
        for (const bad of [{ to: " " }, { to: "+15550100", mode: "sideways" as "warm" }])
          try {
            call.transfer(bad);
          } catch (err) {
            transferRefused.push((err as Error).message);
          }
        call.transfer({ to: "+15550100", mode: "blind" });
        return;
      }
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
    twilio: { accountSid: ACCOUNT, authToken: TOKEN },
    outbound: { twilio: { apiBase: rest.url } },
    log: { level: (process.env.E2E_LOG as "info" | undefined) ?? "silent" },
  });
}, 60_000);

afterAll(async () => {
  await bridge?.close();
  await rest?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function callWithKey(digit: string, transfers: string[] = []): Promise<CallRecord> {
  const callSid = newCallSid();
  const followed = rest.follow(callSid);
  const r = await simulateCall({
    url: bridge.url,
    bridgeToken: bridge.token,
    callSid,
    accountSid: ACCOUNT,
    authToken: TOKEN,
    ended: followed.ended,
    to: "+15551000",
    dtmf: [
      { digit, atMs: 2500 },
      { digit: "#", atMs: 2550 },
    ],
    hangUpAfterMs: 2500,
    maxSeconds: 20,
  });
  for (const u of followed.updates) if (u.dial !== undefined) transfers.push(u.dial);
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

  it("an onTurn hook's call.transfer transfers the call once the reply is heard; a bad request is refused", async () => {
    const transfers: string[] = [];
    const record = await callWithKey("5", transfers);
    expect(transferRefused).toEqual([
      "transfer: `to` must name the target (a phone number or a SIP URI)",
      'transfer: `mode` must be blind or warm, not "sideways"',
    ]);
    expect(transfers).toEqual(["+15550100"]);
    expect(heard(record).map((t) => t.text)).toEqual(["Support line.", "Putting you through to the desk."]);
    expect(record.events.at(-1)).toMatchObject({ type: "call-end", outcome: "transferred" });
  }, 40_000);
});
