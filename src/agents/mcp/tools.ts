// An MCP server's tool as the session sees every in-process tool: a CodeTool (session/code-tools.ts).
// The session runs it as it runs one written in TypeScript (its deadline, the reply's signal, an
// error told to the model), and never learns that MCP is behind it.
import type { ChatTool } from "../../api/types/index.ts";
import type { CodeTool, ToolContext } from "../../session/code-tools.ts";
import { nowIn, TemplateRenderer } from "../templates.ts";
import type { McpConnection, McpTool } from "./connection.ts";

export interface McpToolPlan {
  readonly tool: McpTool;
  /** The server's name, for the description of a tool that has none. */
  readonly server: string;
  readonly connection: McpConnection;
  readonly timeoutMs: number;
  /** Headers holding per-call variables ({{var.NAME}}…), filled for each call (HTTP servers). */
  readonly callHeaders: Readonly<Record<string, string>>;
  /** The agent's time zone, for `{{now}}` in those headers. */
  readonly timeZone: string;
}

export function mcpCodeTool(p: McpToolPlan): CodeTool {
  const { tool, connection, timeoutMs } = p;
  return {
    name: tool.name,
    description: tool.description ?? tool.title ?? `${tool.name} (from the MCP server ${p.server})`,
    parameters: parametersOf(tool.inputSchema),
    timeoutMs,
    mcpServer: p.server,
    async run(args, ctx) {
      const headers = headersFor(p.callHeaders, ctx, p.timeZone);
      const result = await connection.call(tool.name, (args ?? {}) as Record<string, unknown>, {
        signal: ctx.signal,
        timeoutMs,
        ...(headers ? { headers } : {}),
      });
      const text = resultText(result);
      // The server's own error text is what the model can talk about.
      if (result.isError) throw new Error(text === "ok" ? "the server reported an error" : text);
      return text;
    },
  };
}

/** What the model reads of a tool's result: structured content as JSON, else the text content. */
export function resultText(result: {
  content?: ReadonlyArray<{ type: string; [k: string]: unknown }>;
  structuredContent?: Record<string, unknown> | undefined;
  isError?: boolean | undefined;
}): string {
  if (result.structuredContent !== undefined && !result.isError)
    return JSON.stringify(result.structuredContent);
  const parts: string[] = [];
  for (const c of result.content ?? []) {
    if (c.type === "text" && typeof c.text === "string") parts.push(c.text);
    else if (c.type === "resource" && typeof (c.resource as { text?: unknown })?.text === "string")
      parts.push((c.resource as { text: string }).text);
    else if (c.type === "resource_link") parts.push(`${String(c.name)}: ${String(c.uri)}`);
    // Images and audio have no way to a voice conversation's model: it hears that they were left out.
    else parts.push(`[${c.type} content left out]`);
  }
  const text = parts.join("\n");
  return text ? text : "ok";
}

function parametersOf(schema: McpTool["inputSchema"]): ChatTool["function"]["parameters"] {
  const { $schema: _dialect, ...rest } = schema as Record<string, unknown>;
  return {
    ...rest,
    type: "object",
    properties: schema.properties ?? {},
  } as ChatTool["function"]["parameters"];
}

/** The per-call headers filled from the call (`{{now}}`: when the tool is called). */
function headersFor(
  templates: Readonly<Record<string, string>>,
  ctx: ToolContext,
  timeZone: string,
): Record<string, string> | undefined {
  const names = Object.keys(templates);
  if (names.length === 0) return undefined;
  const c = ctx.call;
  const renderer = new TemplateRenderer(
    {
      caller: c.from,
      called: c.to,
      transport: c.transport,
      params: c.params,
      vars: c.variables,
      now: nowIn(timeZone, new Date()),
    },
    (variable) => ctx.log.info({ variable }, `{{${variable}}} has no value on this call: left empty`),
  );
  return Object.fromEntries(names.map((k) => [k, renderer.render(templates[k]!)]));
}
