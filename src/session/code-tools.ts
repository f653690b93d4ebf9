// Tools written in code (the TypeScript API's `tool()`), run in-process beside the HTTP tools. As
// for an HTTP tool, nothing a tool does can break the call: a thrown error, bad arguments or a
// tool that outlives its time limit become a result text the model reads and can talk about.
import type { ChatTool } from "../api/types/index.ts";
import type { Logger } from "../core/log.ts";
import { checkDigits } from "./dtmf-out.ts";
import type { CallInfo } from "./transport.ts";

/** The call a tool runs in. */
export interface ToolCall {
  readonly id: string;
  readonly transport: CallInfo["transport"];
  readonly from: string | undefined;
  readonly to: string | undefined;
  /** The call's parameters (Twilio <Parameter>s, SIP headers, the browser call's query). */
  readonly params: Readonly<Record<string, string>>;
  /** The call's variables (the call-start webhook's or onCallStart's answer). */
  readonly variables: Readonly<Record<string, string>>;
}

/** What a tool can do to the call while it runs. */
export interface ToolContext {
  readonly call: ToolCall;
  /** Speaks `text` now, in the agent's voice, within the reply that called the tool. */
  say(text: string): void;
  /**
   * Transfers the call once the agent's words are heard (as the transfer_call tool does): to a
   * target, or `{ to, mode, brief }`; warm calls the person and briefs them first, and the agent
   * comes back if they do not take the call. Throws a TypeError on an empty target, or a mode other
   * than blind or warm.
   */
  transfer(target: string | TransferRequest): void;
  /** Hangs up once the agent's words are heard (as the end_call tool does). */
  hangUp(reason?: string): void;
  /**
   * Presses keys once the agent's words are heard (as the send_dtmf tool does): 0-9, *, #, A-D, and
   * `w` to wait half a second. Throws on anything else, or on a call that carries no digits.
   */
  sendDtmf(digits: string): void;
  /** Hands the call to another of the agent's `handoffs` once its words are heard (as the handoff tool does). */
  handoff(agent: string, reason?: string): void;
  readonly log: Logger;
  /** Fires when the caller talks over the reply (barge-in), or the call ends. */
  readonly signal: AbortSignal;
}

/** A tool the session runs in-process; `run` gets the model's arguments as parsed JSON. */
export interface CodeTool {
  readonly name: string;
  readonly description: string;
  /** The JSON schema of the arguments, as the model sees it. */
  readonly parameters: ChatTool["function"]["parameters"];
  /** How long the tool may run before the model is told it did not answer, ms (default 5000). */
  readonly timeoutMs?: number;
  /** The MCP server the tool calls (src/agents/mcp/); absent for a tool written in code. */
  readonly mcpServer?: string;
  /** The result: text as it is, anything else as JSON. A thrown error is told to the model. */
  run(args: unknown, ctx: ToolContext): unknown;
}

/** A transfer asked for in code: `mode` defaults to the agent's transferMode. */
export interface TransferRequest {
  readonly to: string;
  readonly mode?: "blind" | "warm";
  /** What the person is told before taking the call (warm); default: the agent's brief. */
  readonly brief?: string;
}

/** What a code tool asked of the call besides its result. */
export type CodeToolAction =
  | { kind: "end-call"; reason: string }
  | { kind: "dtmf"; digits: string }
  | { kind: "transfer"; target: string; mode?: "blind" | "warm"; brief?: string }
  | { kind: "handoff"; agent: string; reason: string };

export interface CodeToolRun {
  content: string;
  action?: CodeToolAction;
}

/** Runs `tool`; `signal` is the reply's (barge-in) and the call's end. Never throws. */
export async function runCodeTool(
  tool: CodeTool,
  args: unknown,
  env: {
    call: ToolCall;
    log: Logger;
    say: (text: string) => void;
    signal: AbortSignal;
    /** The call carries keypad digits (ctx.sendDtmf). */
    keypad?: boolean;
  },
): Promise<CodeToolRun> {
  const timeoutMs = tool.timeoutMs ?? 5000;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = AbortSignal.any([env.signal, timeout]);
  let action: CodeToolAction | undefined;
  const ctx: ToolContext = {
    call: env.call,
    say: (text) => {
      if (!signal.aborted && text.trim()) env.say(text);
    },
    transfer: (target) => {
      action = transferAction(target);
    },
    hangUp: (reason = `${tool.name} ended the call`) => {
      action = { kind: "end-call", reason };
    },
    handoff: (agent, reason = `${tool.name} handed the call on`) => {
      action = { kind: "handoff", agent, reason };
    },
    sendDtmf: (digits) => {
      if (!env.keypad) throw new Error(`a ${env.call.transport} call carries no keypad digits`);
      const keys = checkDigits(digits);
      if ("error" in keys) throw new TypeError(`sendDtmf: ${keys.error}`);
      action = { kind: "dtmf", digits: keys.digits };
    },
    log: env.log.child({ tool: tool.name }),
    signal,
  };
  // The tool may ignore its signal: the reply does not wait for it past the timeout or a barge-in.
  const stopped = new Promise<never>((_, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  stopped.catch(() => {});
  const started = performance.now();
  try {
    const value = await Promise.race([Promise.resolve().then(() => tool.run(args, ctx)), stopped]);
    ctx.log.info({ ms: Math.round(performance.now() - started) }, "tool answered");
    return { content: resultText(value), ...(action ? { action } : {}) };
  } catch (err) {
    if (timeout.aborted && !env.signal.aborted) {
      ctx.log.warn({ timeoutMs }, "tool timed out");
      return { content: `error: the ${tool.name} tool did not answer within ${timeoutMs} ms` };
    }
    if (env.signal.aborted) return { content: `error: the ${tool.name} tool was interrupted` };
    const message = err instanceof Error ? err.message : String(err);
    ctx.log.warn({ err: message }, "tool failed");
    return { content: `error: the ${tool.name} tool failed: ${message}` };
  }
}

/**
 * The transfer a tool or a hook asked for, checked: throws a TypeError naming what is wrong (the
 * same for ctx.transfer and a hook's call.transfer).
 */
export function transferAction(t: string | TransferRequest): Extract<CodeToolAction, { kind: "transfer" }> {
  const req: TransferRequest = typeof t === "string" ? { to: t } : t;
  if (typeof req !== "object" || req === null)
    throw new TypeError("transfer: expected a target, or { to, mode, brief }");
  if (typeof req.to !== "string" || !req.to.trim())
    throw new TypeError("transfer: `to` must name the target (a phone number or a SIP URI)");
  if (req.mode !== undefined && req.mode !== "blind" && req.mode !== "warm")
    throw new TypeError(`transfer: \`mode\` must be blind or warm, not ${JSON.stringify(req.mode)}`);
  if (req.brief !== undefined && typeof req.brief !== "string")
    throw new TypeError("transfer: `brief` must be text");
  return {
    kind: "transfer",
    target: req.to.trim(),
    ...(req.mode ? { mode: req.mode } : {}),
    ...(req.brief?.trim() ? { brief: req.brief.trim() } : {}),
  };
}

function resultText(value: unknown): string {
  const text = typeof value === "string" ? value : value === undefined ? "ok" : JSON.stringify(value);
  return text.slice(0, 4000);
}
