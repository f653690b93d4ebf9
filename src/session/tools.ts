// Tools the model can call during a call: the built-in end_call and transfer_call, user-defined
// HTTP tools from the configuration, and tools written in code (code-tools.ts), one list to the
// model. A tool never throws into the call: every failure becomes a result text the model reads
// and can talk about.
import type { ChatTool, ToolParameterSchema } from "../api/types/index.ts";
import type { Logger } from "../core/log.ts";
import { type CodeTool, runCodeTool, type ToolCall } from "./code-tools.ts";
import type { SessionConfig } from "./config.ts";
import { checkDigits, SEND_DTMF, SEND_DTMF_NAME } from "./dtmf-out.ts";
import { HANDOFF, handoffRequest, handoffTool } from "./handoff-tool.ts";
import type { ToolCallRequest } from "./services.ts";
import type { CallTransport } from "./transport.ts";

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
  | { kind: "dtmf"; digits: string }
  | { kind: "handoff"; agent: string; reason: string }
  | { kind: "transfer"; target: string; mode?: TransferMode; brief?: string };

/** blind: the call is handed over at once; warm: the person is called and briefed first (warm-transfer.ts). */
export type TransferMode = "blind" | "warm";

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

/** transfer_call when a warm transfer is allowed: the model chooses, warm by default. */
export const WARM_TRANSFER_CALL: ChatTool = {
  type: "function",
  function: {
    name: "transfer_call",
    description:
      "Transfer the caller to a person once you have told them you are doing so. warm (the default): the person is called and briefed first while the caller holds, and you come back if they do not take the call; blind: the call is handed over at once.",
    parameters: {
      type: "object",
      properties: {
        target: { type: "string", description: "phone number or SIP URI; omit for the default desk" },
        mode: { type: "string", enum: ["warm", "blind"], description: "warm (default) or blind" },
        brief: { type: "string", description: "what the person is told before taking the call (optional)" },
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
  /** The agents the call may be handed to (the handoff tool). */
  readonly #handoffs: readonly string[];
  readonly #transferMode: TransferMode;
  /** The call's transport carries keypad digits: the model gets send_dtmf (dtmf-out.ts). */
  #keypad = false;

  constructor(
    httpTools: readonly HttpToolConfig[],
    transferTarget?: string,
    code?: CallCodeTools,
    handoffs: readonly string[] = [],
    transferMode: TransferMode = "blind",
  ) {
    this.#transferMode = transferMode;
    this.#handoffs = handoffs;
    this.#http = new Map(httpTools.map((t) => [t.name, t]));
    this.#transferTarget = transferTarget;
    this.#code = new Map(code?.tools.map((t) => [t.name, t]));
    this.#codeEnv = code;
  }

  /** Offers send_dtmf: the call can carry the agent's keypad digits. */
  offerKeypad(): this {
    this.#keypad = true;
    return this;
  }

  /** Where the tool named `name` comes from, or undefined when there is none by that name. */
  kindOf(name: string): ToolKind | undefined {
    if (name === SEND_DTMF_NAME && this.#keypad) return "builtin";
    if (name === END_CALL.function.name || name === TRANSFER_CALL.function.name) return "builtin";
    if (name === HANDOFF && this.#handoffs.length) return "builtin";
    if (this.#code.has(name)) return this.#code.get(name)!.mcpServer ? "mcp" : "code";
    if (this.#http.has(name)) return "http";
    return undefined;
  }

  definitions(): ChatTool[] {
    const defs: ChatTool[] = [END_CALL];
    if (this.#transferTarget) defs.push(this.#transferMode === "warm" ? WARM_TRANSFER_CALL : TRANSFER_CALL);
    if (this.#handoffs.length) defs.push(handoffTool(this.#handoffs));
    if (this.#keypad) defs.push(SEND_DTMF);
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
    if (call.name === HANDOFF && this.#handoffs.length)
      return handoffRequest(args.agent, args.reason, this.#handoffs);
    if (call.name === "end_call")
      return { kind: "end-call", reason: String(args.reason ?? "agent ended the call") };
    if (call.name === SEND_DTMF_NAME && this.#keypad) {
      const keys = checkDigits(args.digits);
      return "error" in keys
        ? { kind: "result", content: `error: ${keys.error}` }
        : { kind: "dtmf", ...keys };
    }
    if (call.name === "transfer_call") {
      const target = typeof args.target === "string" && args.target ? args.target : this.#transferTarget;
      if (!target) return { kind: "result", content: "error: no transfer target is configured" };
      if (this.#transferMode !== "warm") return { kind: "transfer", target };
      const mode: TransferMode = args.mode === "blind" ? "blind" : "warm";
      const brief = typeof args.brief === "string" && args.brief.trim() ? args.brief.trim() : undefined;
      return { kind: "transfer", target, mode, ...(brief ? { brief } : {}) };
    }
    const code = this.#code.get(call.name);
    if (code && this.#codeEnv) {
      const { call: info, log } = this.#codeEnv;
      const ran = await runCodeTool(code, args, { call: info, log, say, signal, keypad: this.#keypad });
      // A code tool hands the call only where the model could: to the agent's own `handoffs`.
      if (ran.action?.kind === "handoff") {
        const asked = handoffRequest(ran.action.agent, ran.action.reason, this.#handoffs);
        if (asked.kind === "result") return asked;
      }
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
export function toolBoxOf(
  config: SessionConfig,
  transport: Pick<CallTransport, "info" | "dtmfOut">,
  log: Logger,
): ToolBox {
  const { info } = transport;
  const call: ToolCall = {
    id: info.callId,
    transport: info.transport,
    from: info.from,
    to: info.to,
    params: info.params,
    variables: config.variables ?? {},
  };
  const code = { tools: config.codeTools ?? [], call, log };
  const agents = config.handoffs?.agents;
  const box = new ToolBox(config.httpTools, config.transferTarget, code, agents, config.transferMode);
  return transport.dtmfOut ? box.offerKeypad() : box;
}
