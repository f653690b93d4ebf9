// An MCP server over stdio, written with the SDK, as a program the bridge starts: orders looked up
// (structured content), a tool that never answers, one that kills the server, one that tells what
// environment it was given, and one that adds a tool (the server says its list changed). Each start is written to MCP_STARTS_FILE (its pid), so a test can
// see the server started again after a crash.
import { appendFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

if (process.env.MCP_STARTS_FILE) appendFileSync(process.env.MCP_STARTS_FILE, `${process.pid}\n`);

const server = new McpServer({ name: "orders", version: "1.0.0" });
server.registerTool(
  "lookup_order",
  {
    description: "Looks up an order by its number",
    inputSchema: { order_id: z.string().describe("the order number") },
    outputSchema: { order: z.string(), status: z.string() },
  },
  async ({ order_id }) => {
    const found = { order: order_id, status: "shipped" };
    return { content: [{ type: "text", text: JSON.stringify(found) }], structuredContent: found };
  },
);
server.registerTool(
  "hang_order",
  { description: "Never answers", inputSchema: { order_id: z.string() } },
  () => new Promise<never>(() => {}),
);
server.registerTool(
  "crash_order",
  { description: "Kills the server", inputSchema: { order_id: z.string() } },
  () => {
    process.stderr.write("orders server: crashing on purpose\n");
    process.exit(3);
  },
);
server.registerTool("server_env", { description: "Tells the server's environment" }, async () => ({
  content: [
    {
      type: "text",
      text: `token=${process.env.ORDERS_TOKEN ?? "none"} secret=${process.env.BRIDGE_SECRET ?? "none"}`,
    },
  ],
}));
server.registerTool(
  "refuse_order",
  { description: "Answers with an error", inputSchema: { order_id: z.string() } },
  async ({ order_id }) => ({
    content: [{ type: "text", text: `order ${order_id} is not ours` }],
    isError: true,
  }),
);

server.registerTool("add_tool", { description: "Adds a tool to the server's list" }, async () => {
  server.registerTool("added_tool", { description: "A tool added while the server runs" }, async () => ({
    content: [{ type: "text", text: "added" }],
  }));
  return { content: [{ type: "text", text: "ok" }] };
});

await server.connect(new StdioServerTransport());
