// MCP servers' tools in real calls: an agent defined in code (createBridge, defineAgent) with a
// stdio server (a child process) and a streamable HTTP server (a real socket), both written with
// the SDK; calls through the Twilio simulator, where keypad digits make the local service's
// scripted chat engine call the tools. Results are spoken; a tool that hangs is told to the model
// as a tool error and the turn goes on; after a server crashes, the next call's tool works.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type CallRecord, createBridge, defineAgent, type VoiceBridge, z } from "../../../app/index.ts";
import { simulateCall } from "../../../tools/twilio-sim/simulate.ts";
import { type McpHttpServer, startMcpHttpServer } from "../../helpers/mcp-http-server.ts";
import { until } from "../../helpers/until.ts";

const STDIO_SERVER = new URL("../../helpers/mcp-stdio-server.ts", import.meta.url).pathname;

let dir: string;
let bridge: VoiceBridge;
let crm: McpHttpServer;

/** A rule of the scripted chat engine: this keypad digit makes the model call this tool. */
const keypadRule = (digit: string, name: string, args: Record<string, string>, afterTool: string) => ({
  intent: name,
  when: [`keypad: ${digit}\\b`],
  reply: "Let me check.",
  tool: { name, arguments: args },
  without_tool: "No tool.",
  after_tool: afterTool,
});

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-mcp-call-"));
  crm = await startMcpHttpServer((server, seen) => {
    server.registerTool(
      "find_customer",
      { description: "Finds the caller in the CRM", inputSchema: { phone: z.string() } },
      async ({ phone }, extra) => {
        seen.push({ tool: "find_customer", headers: { ...extra.requestInfo?.headers } });
        return { content: [{ type: "text", text: `Ada (${phone})` }] };
      },
    );
  });
  const scripted = join(dir, "scripted.yaml");
  writeFileSync(
    scripted,
    stringify({
      name: "mcp test line",
      greeting: "Hello.",
      fallback: "Press a key.",
      rules: [
        keypadRule("1", "lookup_order", { order_id: "4492" }, "Order {result.order} is {result.status}."),
        keypadRule("2", "find_customer", { phone: "555" }, "You are {result}."),
        keypadRule("3", "hang_order", { order_id: "1" }, "Sorry: {result}."),
        keypadRule("4", "crash_order", { order_id: "1" }, "Sorry: {result}."),
      ],
    }),
  );
  const orders = defineAgent({
    greeting: "Orders line.",
    onCallStart: () => ({ variables: { account: "acct-7" } }),
    mcpServers: {
      // The crash must be told by the connection closing, not by a deadline that a loaded machine
      // can reach first: the hanging tool has a server (the same program) of its own, and only it
      // the short deadline.
      orders: {
        command: process.execPath,
        args: [STDIO_SERVER],
        env: { MCP_STARTS_FILE: join(dir, "starts") },
        tools: ["lookup_order", "crash_order"],
      },
      slow: {
        command: process.execPath,
        args: [STDIO_SERVER],
        tools: ["hang_order"],
        timeoutMs: 500,
      },
      crm: { url: crm.url, headers: { "x-account": "{{var.account}}" } },
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
  await crm?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function callWithKey(digit: string) {
  const r = await simulateCall({
    url: bridge.url,
    bridgeToken: bridge.token,
    from: "+15550001234",
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

/** What the agent said in answer to the keypad: its second turn. */
function answer(record: CallRecord) {
  const turn = record.turns.filter((t) => t.role === "assistant")[1];
  return {
    tools: turn?.role === "assistant" ? turn.tools : undefined,
    text: turn?.role === "assistant" ? turn.generated : "",
  };
}

describe("MCP servers' tools in a call", () => {
  it("a stdio server's tool: its structured result reaches the model and is spoken", async () => {
    const record = await callWithKey("1");
    expect(answer(record)).toEqual({
      tools: ["lookup_order"],
      text: expect.stringContaining("Order 4492 is shipped."),
    });
  }, 30_000);

  it("an HTTP server's tool, with the call's variables in its headers", async () => {
    const record = await callWithKey("2");
    expect(answer(record)).toEqual({
      tools: ["find_customer"],
      text: expect.stringContaining("You are Ada (555)."),
    });
    expect(crm.toolCalls.at(-1)?.headers["x-account"]).toBe("acct-7");
  }, 30_000);

  it("a tool that hangs: the model gets a tool error at the deadline, and the turn goes on", async () => {
    const record = await callWithKey("3");
    expect(answer(record).text).toContain("Sorry: error: the hang_order tool did not answer within 500 ms.");
  }, 30_000);

  it("a server that crashes: the call hears the error, the server is started again, the next call works", async () => {
    const pids = () => readFileSync(join(dir, "starts"), "utf8").trim().split("\n");
    const before = pids().length;
    const crashed = await callWithKey("4");
    expect(answer(crashed).text).toMatch(
      /Sorry: error: the crash_order tool failed: the server closed the connection/,
    );
    await until(() => pids().length === before + 1, "the orders server started again");
    const record = await callWithKey("1");
    expect(answer(record).text).toContain("Order 4492 is shipped.");
  }, 60_000);
});
