// An MCP server over streamable HTTP, written with the SDK, in the test's process on a real socket:
// one SDK server and transport per session, as the SDK's own examples keep them. It records the
// headers of each tool call, can answer 503 for a while (a server that is down), and can forget
// its sessions (a restarted server), which clients hear as HTTP 404.
import { randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";

export interface McpHttpServer {
  readonly url: string;
  /** The headers of each tool call, in order. */
  readonly toolCalls: { tool: string; headers: IncomingHttpHeaders }[];
  /** Sessions opened so far. */
  readonly sessions: () => number;
  /** While true, every request is answered 503. */
  down: boolean;
  /** Drops every session, as a restarted server has none. */
  forgetSessions(): Promise<void>;
  close(): Promise<void>;
}

/** Starts a server whose tools `register` adds to each session's McpServer. */
export async function startMcpHttpServer(
  register: (server: McpServer, seen: McpHttpServer["toolCalls"]) => void,
): Promise<McpHttpServer> {
  const live = new Map<string, StreamableHTTPServerTransport>();
  const toolCalls: McpHttpServer["toolCalls"] = [];
  let opened = 0;
  const state = { down: false };
  const http: Server = createServer((req, res) => {
    void (async () => {
      if (state.down) return void res.writeHead(503).end("down");
      const id = req.headers["mcp-session-id"];
      if (typeof id === "string") {
        const known = live.get(id);
        if (!known)
          return void res.writeHead(404, { "content-type": "application/json" }).end(
            JSON.stringify({
              jsonrpc: "2.0",
              error: { code: -32001, message: "Session not found" },
              id: null,
            }),
          );
        return known.handleRequest(req, res);
      }
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => {
          opened++;
          live.set(sid, transport);
        },
      });
      const server = new McpServer({ name: "crm", version: "1.0.0" });
      register(server, toolCalls);
      await server.connect(transport);
      await transport.handleRequest(req, res);
    })().catch((err: Error) => {
      if (!res.headersSent) res.writeHead(500).end(err.message);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  const forgetSessions = async () => {
    const transports = [...live.values()];
    live.clear();
    await Promise.all(transports.map((t) => t.close()));
  };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    toolCalls,
    sessions: () => opened,
    get down() {
      return state.down;
    },
    set down(v: boolean) {
      state.down = v;
    },
    forgetSessions,
    async close() {
      await forgetSessions();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
