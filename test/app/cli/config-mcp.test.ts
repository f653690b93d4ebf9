// `voice-bridge config` with agents' MCP servers, as a user runs it (the real bin/voice-bridge in a
// child process): each server is asked once for its tools, a server that cannot be reached says
// why, and the secrets of headers and environments are masked like every other secret.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { z } from "zod";
import { type McpHttpServer, startMcpHttpServer } from "../../helpers/mcp-http-server.ts";

const BIN = new URL("../../../bin/voice-bridge", import.meta.url).pathname;
const STDIO_SERVER = new URL("../../helpers/mcp-stdio-server.ts", import.meta.url).pathname;

let dir: string;
let crm: McpHttpServer;
/** A port nothing listens on (a server's, closed). */
let closedPort: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-mcp-config-"));
  const gone = createServer();
  await new Promise<void>((resolve) => gone.listen(0, "127.0.0.1", resolve));
  closedPort = (gone.address() as AddressInfo).port;
  await new Promise((resolve) => gone.close(resolve));
  crm = await startMcpHttpServer((server) => {
    server.registerTool(
      "find_customer",
      { description: "Finds a customer", inputSchema: { phone: z.string() } },
      async () => ({
        content: [{ type: "text", text: "Ada" }],
      }),
    );
  });
});

afterAll(async () => {
  await crm?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("voice-bridge config", () => {
  it("lists each agent's MCP servers and their tools, secrets masked", async () => {
    const file = join(dir, "config.yaml");
    writeFileSync(
      file,
      stringify({
        agent: {
          mcpServers: {
            orders: {
              command: process.execPath,
              args: [STDIO_SERVER],
              env: { ORDERS_TOKEN: "orders-secret-4711" },
              tools: ["lookup_order", "server_env"],
            },
          },
        },
        agents: {
          sales: {
            mcpServers: {
              crm: { url: crm.url, headers: { authorization: "Bearer crm-secret-4712" } },
              gone: { url: `http://127.0.0.1:${closedPort}/mcp` },
            },
          },
        },
      }),
    );
    const { stdout } = await promisify(execFile)(BIN, ["config", "--config", file], {
      env: { ...process.env, LOG_LEVEL: "silent" },
    });
    const config = JSON.parse(stdout) as {
      agent: { mcpServers: { orders: { env: Record<string, string> } } };
      agents: { sales: { mcpServers: { crm: { headers: Record<string, string> } } } };
      mcpTools: Record<string, Record<string, { tools?: string[]; error?: string }>>;
    };
    expect(config.mcpTools.default).toEqual({ orders: { tools: ["lookup_order", "server_env"] } });
    expect(config.mcpTools.sales?.crm).toEqual({ tools: ["find_customer"] });
    expect(config.mcpTools.sales?.gone?.error).toMatch(/ECONNREFUSED/);
    expect(config.agent.mcpServers.orders.env).toEqual({ ORDERS_TOKEN: "***" });
    expect(config.agents.sales.mcpServers.crm.headers).toEqual({ authorization: "***" });
    expect(stdout).not.toContain("orders-secret-4711");
    expect(stdout).not.toContain("crm-secret-4712");
  }, 60_000);
});
