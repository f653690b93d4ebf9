// The agents' MCP servers against real ones written with the SDK: a program over stdio (a child
// process) and a streamable HTTP server on a real socket. Their tools are offered as the session's
// in-process tools and run the way the session runs them (runCodeTool): results, a tool that hangs,
// a server that crashes or forgets its session, name clashes refused at start.
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${NAME} is the setting's own syntax, not a template
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type AgentMcp, McpServers } from "../../../src/agents/mcp/servers.ts";
import { mcpServerSchema } from "../../../src/config/mcp-servers.ts";
import { silentLogger } from "../../../src/core/log.ts";
import { type CodeTool, runCodeTool, type ToolCall } from "../../../src/session/code-tools.ts";
import { type McpHttpServer, startMcpHttpServer } from "../../helpers/mcp-http-server.ts";
import { until } from "../../helpers/until.ts";

const STDIO_SERVER = new URL("../../helpers/mcp-stdio-server.ts", import.meta.url).pathname;

let dir: string;
let crm: McpHttpServer;
const started: McpServers[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-mcp-"));
  crm = await startMcpHttpServer((server, seen) => {
    server.registerTool(
      "find_customer",
      { description: "Finds the caller in the CRM", inputSchema: { phone: z.string() } },
      async ({ phone }, extra) => {
        seen.push({ tool: "find_customer", headers: { ...extra.requestInfo?.headers } });
        return { content: [{ type: "text", text: `customer with ${phone}: Ada` }] };
      },
    );
  });
});

afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.close()));
});

afterAll(async () => {
  await crm?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const BUILT_IN = new Map([
  ["end_call", 'the built-in tool "end_call"'],
  ["transfer_call", 'the built-in tool "transfer_call"'],
]);

function agent(servers: Record<string, unknown>, otherTools = BUILT_IN): AgentMcp {
  return {
    agent: "orders",
    servers: Object.fromEntries(Object.entries(servers).map(([k, v]) => [k, mcpServerSchema.parse(v)])),
    timeZone: "UTC",
    otherTools,
  };
}

function ordersServer(extra: Record<string, unknown> = {}, startsFile = join(dir, "starts")) {
  return {
    command: process.execPath,
    args: [STDIO_SERVER],
    env: { MCP_STARTS_FILE: startsFile, ORDERS_TOKEN: "${MCP_TEST_TOKEN}" },
    ...extra,
  };
}

async function start(plan: AgentMcp, env: NodeJS.ProcessEnv = { MCP_TEST_TOKEN: "t-42" }) {
  const servers = await McpServers.start([plan], silentLogger, env);
  started.push(servers);
  return servers;
}

const call: ToolCall = {
  id: "call-1",
  transport: "twilio",
  from: "+15550001234",
  to: "+15551000",
  params: {},
  variables: { account: "acct-7" },
};

function run(tool: CodeTool | undefined, args: unknown, signal = new AbortController().signal) {
  if (!tool) throw new Error("no such tool offered");
  return runCodeTool(tool, args, { call, log: silentLogger, say: () => {}, signal });
}

const byName = (servers: McpServers, name: string) => servers.toolsOf("orders").find((t) => t.name === name);

describe("MCP servers of an agent", () => {
  it("offers both servers' tools, and feeds each call's result back as the tool's result", async () => {
    const servers = await start(
      agent({
        orders: ordersServer(),
        crm: {
          url: crm.url,
          headers: {
            authorization: "Bearer ${MCP_TEST_TOKEN}",
            "x-account": "{{var.account}} from {{caller}}",
          },
        },
      }),
    );
    const names = servers.toolsOf("orders").map((t) => t.name);
    expect(names).toEqual([
      "lookup_order",
      "hang_order",
      "crash_order",
      "server_env",
      "refuse_order",
      "add_tool",
      "find_customer",
    ]);
    const lookup = byName(servers, "lookup_order")!;
    expect(lookup.description).toBe("Looks up an order by its number");
    expect(lookup.parameters).toMatchObject({
      type: "object",
      properties: { order_id: { type: "string", description: "the order number" } },
      required: ["order_id"],
    });
    // Structured content as JSON; text content as it is; the server's error as a tool error.
    expect(await run(lookup, { order_id: "4492" })).toEqual({
      content: JSON.stringify({ order: "4492", status: "shipped" }),
    });
    expect((await run(byName(servers, "server_env"), {})).content).toBe("token=t-42 secret=none");
    expect((await run(byName(servers, "refuse_order"), { order_id: "9" })).content).toBe(
      "error: the refuse_order tool failed: order 9 is not ours",
    );
    // The HTTP server hears the fixed header and this call's variables in the per-call one.
    expect((await run(byName(servers, "find_customer"), { phone: "555" })).content).toBe(
      "customer with 555: Ada",
    );
    expect(crm.toolCalls.at(-1)?.headers).toMatchObject({
      authorization: "Bearer t-42",
      "x-account": "acct-7 from +15550001234",
    });
  }, 30_000);

  it("a server whose tools change: the new list is offered", async () => {
    const servers = await start(agent({ orders: ordersServer() }));
    expect(byName(servers, "added_tool")).toBeUndefined();
    expect((await run(byName(servers, "add_tool"), {})).content).toBe("ok");
    const added = await until(() => byName(servers, "added_tool"), "the added tool offered");
    expect((await run(added, {})).content).toBe("added");
  }, 30_000);

  it("a tool that hangs: the call ends at its deadline as a tool error, and the server goes on serving", async () => {
    const servers = await start(agent({ orders: ordersServer({ timeoutMs: 300 }) }));
    expect(await run(byName(servers, "hang_order"), { order_id: "1" })).toEqual({
      content: "error: the hang_order tool did not answer within 300 ms",
    });
    expect((await run(byName(servers, "lookup_order"), { order_id: "2" })).content).toContain("shipped");
  }, 30_000);

  it("a stdio server that crashes is started again, and the next call works", async () => {
    const startsFile = join(dir, "starts-crash");
    const servers = await start(agent({ orders: ordersServer({}, startsFile) }));
    const pids = () => readFileSync(startsFile, "utf8").trim().split("\n");
    expect(pids()).toHaveLength(1);
    const crashed = await run(byName(servers, "crash_order"), { order_id: "1" });
    expect(crashed.content).toMatch(/^error: the crash_order tool failed: the server closed the connection/);
    // Once the program runs again the connection is being made: a call waits for it.
    await until(() => pids().length === 2, "the orders server started again");
    expect((await run(byName(servers, "lookup_order"), { order_id: "3" })).content).toContain('"order":"3"');
    expect(new Set(pids()).size).toBe(2);
  }, 30_000);

  it("an HTTP server that forgot the session (restarted): a new session, and the call goes through", async () => {
    const servers = await start(agent({ crm: { url: crm.url } }));
    const before = crm.sessions();
    await crm.forgetSessions();
    expect((await run(byName(servers, "find_customer"), { phone: "1" })).content).toBe(
      "customer with 1: Ada",
    );
    expect(crm.sessions()).toBe(before + 1);
  }, 30_000);

  it("an HTTP server down at start: the bridge starts, and its tools join once it answers", async () => {
    crm.down = true;
    try {
      const servers = await start(agent({ crm: { url: crm.url } }));
      expect(servers.toolsOf("orders")).toEqual([]);
      crm.down = false;
      await until(() => byName(servers, "find_customer"), "the CRM's tools offered", 20_000);
    } finally {
      crm.down = false;
    }
  }, 30_000);

  it("a stdio server that cannot start stops the start, naming it", async () => {
    await expect(start(agent({ broken: { command: join(dir, "no-such-program") } }))).rejects.toThrow(
      /agent "orders", MCP server "broken" could not start: .*ENOENT/,
    );
  });

  it("a `${NAME}` the environment does not set stops the start, naming the key", async () => {
    await expect(start(agent({ orders: ordersServer() }), {})).rejects.toThrow(
      'agent "orders", MCP server "orders": env.ORDERS_TOKEN reads ${MCP_TEST_TOKEN}, which the environment does not set',
    );
  });

  it("a tool name clash is refused at start, naming both tools; a `tools` list resolves it", async () => {
    const withHttpTool = new Map([...BUILT_IN, ["lookup_order", 'the HTTP tool "lookup_order"']]);
    await expect(start(agent({ orders: ordersServer() }, withHttpTool))).rejects.toThrow(
      'agent "orders", MCP server "orders": its tool "lookup_order" has the name of the HTTP tool "lookup_order"',
    );
    await expect(
      start(agent({ orders: ordersServer(), again: ordersServer({}, join(dir, "starts-again")) })),
    ).rejects.toThrow(
      'agent "orders", MCP server "again": its tool "hang_order" has the name of the tool "hang_order" of MCP server "orders"',
    );
    const picked = await start(agent({ orders: ordersServer({ tools: ["server_env"] }) }, withHttpTool));
    expect(picked.toolsOf("orders").map((t) => t.name)).toEqual(["server_env"]);
    await expect(start(agent({ orders: ordersServer({ tools: ["no_such_tool"] }) }))).rejects.toThrow(
      /its `tools` list names "no_such_tool", which the server does not offer/,
    );
  }, 30_000);

  it("closing ends the stdio server", async () => {
    const startsFile = join(dir, "starts-close");
    const servers = await start(agent({ orders: ordersServer({}, startsFile) }));
    const pid = Number(readFileSync(startsFile, "utf8").trim());
    await servers.close();
    await until(() => !alive(pid), "the orders server's exit", 10_000);
  });
});

describe("the mcpServers setting", () => {
  it("takes a stdio command or an HTTP URL, and names what is wrong", () => {
    const problems = (v: unknown) =>
      mcpServerSchema.safeParse(v).error?.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    expect(problems({ command: "npx", args: ["-y", "server"] })).toBeUndefined();
    expect(
      problems({ type: "http", url: "https://mcp.example.com/mcp", headers: { a: "{{var.x}}" } }),
    ).toBeUndefined();
    expect(problems({})).toEqual([
      "command: expected `command` (a stdio server) or `url` (a streamable HTTP server)",
    ]);
    expect(problems({ command: "x", url: "https://a.example/mcp" })).toEqual([
      "url: a server has `command` (stdio) or `url` (HTTP), not both",
    ]);
    expect(problems({ command: "x", env: { A: "{{caller}}" } })).toEqual([
      "env.A: per-call variables ({{…}}) cannot fill it: the server is started once for the bridge, before any call",
    ]);
    expect(problems({ url: "https://a.example/mcp", headers: { a: "{{callr}}" } })).toEqual([
      "headers.a: unknown variable {{callr}}: expected caller, called, transport, now, param.NAME or var.NAME",
    ]);
    expect(problems({ url: "https://a.example/mcp", env: { A: "1" } })).toEqual([
      "env: only a stdio server (`command`) takes it",
    ]);
    expect(problems({ type: "http", command: "x" })).toEqual(["url: required by type http"]);
    expect(problems({ url: "ftp://a.example/mcp" })?.[0]).toMatch(/^url: expected an http\(s\) URL/);
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
