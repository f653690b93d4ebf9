// Tools the model can call during a call: the built-in end_call and transfer_call, user-defined
// HTTP tools from the configuration, and tools written in code (code-tools.ts), one list to the
// model. A tool never throws into the call: every failure becomes a result text the model reads
// and can talk about.
import type { ChatTool, ToolParameterSchema } from "../api/types/index.ts";
import type { Logger } from "../core/log.ts";
import { type CodeTool, runCodeTool, type ToolCall } from "./code-tools.ts";
import type { SessionConfig } from "./config.ts";
import type { ToolCallRequest } from "./services.ts";
import type { CallInfo } from "./transport.ts";

export interface HttpToolConfig {
  name: string;
  description: string;
  /** JSON-schema `properties` of the tool's arguments. */
  parameters: Record<string, ToolParameterSchema>;
  required?: string[];
  url: string;
  method?: "POST" | "GET";
  timeoutMs?: number;
  headers?: Record<string, string>;
  /** Fixed fields sent with every request (JSON body, or GET query), beside the model's arguments. */
  body?: Record<string, string>;
}

/** Where a tool comes from: built in (end_call, transfer_call), the configuration (HTTP), code, an MCP server. */
export type ToolKind = "builtin" | "http" | "code" | "mcp";

export type ToolOutcome =
  | { kind: "result"; content: string }
  | { kind: "end-call"; reason: string }
  | { kind: "transfer"; target: string };

export const END_CALL: ChatTool = {
  type: "function",
  function: {
    name: "end_call",
    description: "Hang up once you have finished speaking. Use after saying goodbye.",
    parameters: {
      type: "object",
      properties: { reason: { type: "string", description: "why the call ends" } },
    },
  },
};

export const TRANSFER_CALL: ChatTool = {
  type: "function",
  function: {
    name: "transfer_call",
    description: "Transfer the caller to a human agent once you have told them you are doing so.",
    parameters: {
      type: "object",
      properties: {
        target: { type: "string", description: "phone number or SIP URI; omit for the default desk" },
      },
    },
  },
};

function parseArgs(raw: string): Record<string, unknown> {
  if (!raw.trim()) return {};
  const parsed: unknown = JSON.parse(raw);
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error("arguments must be a JSON object");
  }
  return parsed as Record<string, unknown>;
}

/** The code tools of a call, with what they are told about it. */
export interface CallCodeTools {
  tools: readonly CodeTool[];
  call: ToolCall;
  log: Logger;
}

export class ToolBox {
  readonly #http: Map<string, HttpToolConfig>;
  readonly #transferTarget: string | undefined;
  readonly #code: Map<string, CodeTool>;
  readonly #codeEnv: CallCodeTools | undefined;

  constructor(httpTools: readonly HttpToolConfig[], transferTarget?: string, code?: CallCodeTools) {
    this.#http = new Map(httpTools.map((t) => [t.name, t]));
    this.#transferTarget = transferTarget;
    this.#code = new Map(code?.tools.map((t) => [t.name, t]));
    this.#codeEnv = code;
  }

  /** Where the tool named `name` comes from, or undefined when there is none by that name. */
  kindOf(name: string): ToolKind | undefined {
    if (name === END_CALL.function.name || name === TRANSFER_CALL.function.name) return "builtin";
    if (this.#code.has(name)) return this.#code.get(name)!.mcpServer ? "mcp" : "code";
    if (this.#http.has(name)) return "http";
    return undefined;
  }

  definitions(): ChatTool[] {
    const defs: ChatTool[] = [END_CALL];
    if (this.#transferTarget) defs.push(TRANSFER_CALL);
    for (const t of this.#http.values()) {
      defs.push({
        type: "function",
        function: {
          name: t.name,
          description: t.description,
          parameters: {
            type: "object",
            properties: t.parameters,
            ...(t.required ? { required: t.required } : {}),
          },
        },
      });
    }
    for (const t of this.#code.values())
      defs.push({
        type: "function",
        function: { name: t.name, description: t.description, parameters: t.parameters },
      });
    return defs;
  }

  /** Runs the model's tool call; `say` speaks within the reply (code tools' ctx.say). */
  async run(
    call: ToolCallRequest,
    signal: AbortSignal,
    say: (text: string) => void = () => {},
  ): Promise<ToolOutcome> {
    let args: Record<string, unknown>;
    try {
      args = parseArgs(call.arguments);
    } catch (err) {
      return {
        kind: "result",
        content: `error: invalid arguments for ${call.name}: ${(err as Error).message}`,
      };
    }
    if (call.name === "end_call")
      return { kind: "end-call", reason: String(args.reason ?? "agent ended the call") };
    if (call.name === "transfer_call") {
      const target = typeof args.target === "string" && args.target ? args.target : this.#transferTarget;
      if (!target) return { kind: "result", content: "error: no transfer target is configured" };
      return { kind: "transfer", target };
    }
    const code = this.#code.get(call.name);
    if (code && this.#codeEnv) {
      const { call: info, log } = this.#codeEnv;
      const ran = await runCodeTool(code, args, { call: info, log, say, signal });
      return ran.action ?? { kind: "result", content: ran.content };
    }
    const tool = this.#http.get(call.name);
    if (!tool) return { kind: "result", content: `error: there is no tool named ${call.name}` };
    // The fixed fields come last: the model cannot overwrite what the operator set (an account id).
    return { kind: "result", content: await this.#callHttp(tool, { ...args, ...tool.body }, signal) };
  }

  async #callHttp(tool: HttpToolConfig, args: Record<string, unknown>, signal: AbortSignal): Promise<string> {
    const timeout = AbortSignal.timeout(tool.timeoutMs ?? 5000);
    const both = AbortSignal.any([signal, timeout]);
    try {
      const method = tool.method ?? "POST";
      const url = new URL(tool.url);
      if (method === "GET") for (const [k, v] of Object.entries(args)) url.searchParams.set(k, String(v));
      const res = await fetch(url, {
        method,
        signal: both,
        headers: { "content-type": "application/json", accept: "application/json", ...tool.headers },
        ...(method === "POST" ? { body: JSON.stringify(args) } : {}),
      });
      const text = await res.text();
      if (!res.ok)
        return `error: the ${tool.name} service answered HTTP ${res.status}: ${text.slice(0, 300)}`;
      return text.slice(0, 4000);
    } catch (err) {
      if (timeout.aborted)
        return `error: the ${tool.name} service did not answer within ${tool.timeoutMs ?? 5000} ms`;
      return `error: the ${tool.name} service could not be reached: ${(err as Error).message}`;
    }
  }
}

/** The tools of one call: its agent's HTTP and code tools, and transfer_call when it has a target. */
export function toolBoxOf(config: SessionConfig, info: CallInfo, log: Logger): ToolBox {
  const call: ToolCall = {
    id: info.callId,
    transport: info.transport,
    from: info.from,
    to: info.to,
    params: info.params,
    variables: config.variables ?? {},
  };
  return new ToolBox(config.httpTools, config.transferTarget, { tools: config.codeTools ?? [], call, log });
}
