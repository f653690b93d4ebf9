// The bridge's wiring of the agents' MCP servers (app/bridge/mcp.ts), with a real stdio server:
// their tools join the agent's code tools, a clash with one of its HTTP or code tools stops the
// start, and a reload that changes an agent's servers says they wait for the next start.
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { liveAgents } from "../../../app/bridge/live-agents.ts";
import { type BridgeMcp, startMcp } from "../../../app/bridge/mcp.ts";
import { tool } from "../../../app/library/tool.ts";
import type { AgentCode } from "../../../src/agents/code.ts";
import { loadConfig } from "../../../src/config/config.ts";
import { silentLogger } from "../../../src/core/log.ts";

const STDIO_SERVER = new URL("../../helpers/mcp-stdio-server.ts", import.meta.url).pathname;
const orders = { command: process.execPath, args: [STDIO_SERVER], tools: ["lookup_order", "server_env"] };
const started: BridgeMcp[] = [];

afterEach(async () => {
  await Promise.all(started.splice(0).map((m) => m.close()));
});

const config = (agents: Record<string, unknown>) =>
  loadConfig({ env: {}, given: { tree: { agents }, name: "test" } });

const codeTool = (name: string) =>
  tool({ name, description: "d", parameters: z.object({}), execute: () => "from code" });

describe("the agents' MCP servers in the bridge", () => {
  it("adds the servers' tools after the agent's code tools; agents without servers keep theirs", async () => {
    const code = new Map<string, AgentCode>([
      ["sales", { tools: [codeTool("quote")] }],
      ["plain", { tools: [codeTool("hello")] }],
    ]);
    const mcp = await startMcp(config({ sales: { mcpServers: { orders } }, plain: {} }), code, silentLogger);
    started.push(mcp);
    expect(mcp.agentCode.get("sales")?.tools?.map((t) => t.name)).toEqual([
      "quote",
      "lookup_order",
      "server_env",
    ]);
    expect(mcp.agentCode.get("sales")?.tools?.map((t) => t.mcpServer)).toEqual([
      undefined,
      "orders",
      "orders",
    ]);
    expect(mcp.agentCode.get("plain")?.tools?.map((t) => t.name)).toEqual(["hello"]);
  }, 30_000);

  it("refuses a clash with the agent's code tool or HTTP tool at start, naming both", async () => {
    const code = new Map<string, AgentCode>([["sales", { tools: [codeTool("lookup_order")] }]]);
    await expect(startMcp(config({ sales: { mcpServers: { orders } } }), code, silentLogger)).rejects.toThrow(
      'agent "sales", MCP server "orders": its tool "lookup_order" has the name of the code tool "lookup_order"',
    );
    const http = { name: "server_env", description: "d", url: "https://example.com/env" };
    await expect(
      startMcp(config({ sales: { mcpServers: { orders }, httpTools: [http] } }), undefined, silentLogger),
    ).rejects.toThrow('its tool "server_env" has the name of the HTTP tool "server_env"');
  }, 30_000);

  it("a reload that changes an agent's servers: they wait for the next start", () => {
    const before = config({ sales: { mcpServers: { orders } } });
    const agents = liveAgents(before, {
      log: silentLogger,
      observer: {},
      agentCode: undefined,
      readConfig: undefined,
      liveCalls: () => 0,
      onReload: () => {},
    });
    expect(agents.reload(before)).toMatchObject({ ok: true, restartNeeded: [] });
    const changed = config({
      sales: { mcpServers: { orders: { ...orders, timeoutMs: 900 } } },
      new: { mcpServers: { orders } },
    });
    expect(agents.reload(changed)).toMatchObject({
      ok: true,
      restartNeeded: ["agents.sales.mcpServers", "agents.new.mcpServers"],
    });
  });
});
