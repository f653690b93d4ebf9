// What an agent defined in code (the TypeScript API's defineAgent) adds to its settings: tools
// that run in-process, and hooks. `onCallStart` answers exactly what the call-start webhook
// answers, and its answer goes through the same checks and the same path (directory.ts), only
// without the HTTP round trip.

import type { CallRecord, TurnView } from "../records/call-record.ts";
import type { CodeTool, TransferRequest } from "../session/code-tools.ts";
import {
  type CallStartAnswer,
  type CallStartRequest,
  callStartAnswerSchema,
  type WebhookResult,
} from "./webhook.ts";

/** What `onCallStart` may answer: the call-start webhook's answer (docs/agents.md, "The call-start webhook"). */
export interface CallStartDecision {
  /** Another agent takes the call (by name). */
  agent?: string;
  /** Variables for `{{var.NAME}}` and the tools' `ctx.call.variables`. */
  variables?: Record<string, string | number | boolean>;
  /** Single settings of the agent replaced for this call (checked as the agent's settings are). */
  overrides?: Record<string, unknown>;
  /** Refuse the call (SIP 603, Twilio <Reject/>). */
  reject?: boolean | { reason?: string };
}

/** A turn as a hook sees it: the call's id and the spoken turn. */
export type CallTurn = TurnView & { callId: string };

/** The live call a hook may act on (onTurn's second argument). */
export interface LiveCall {
  readonly id: string;
  /**
   * Presses keys on the call now (0-9, *, #, A-D; `w` waits half a second): resolves once they
   * are sent, rejects when the call is over or carries no digits (Discord, a browser call).
   */
  sendDtmf(digits: string): Promise<void>;
  /**
   * Hands the call to another of the agent's `handoffs` once the words being spoken are heard (as
   * the handoff tool does); throws when the agent may not hand calls to it, or the call is over.
   */
  handoff(agent: string, reason?: string): void;
  /**
   * Transfers the call once the words being spoken are heard (as the transfer_call tool does): to a
   * target, or `{ to, mode, brief }` (warm: the person is called and briefed first, and the agent
   * comes back if they do not take the call). Throws a TypeError on an empty target or a mode other
   * than blind or warm, an Error when the call is over.
   */
  transfer(target: string | TransferRequest): void;
}

export interface AgentCode {
  readonly tools?: readonly CodeTool[];
  /** Before the call is answered (while it rings, where the transport can). */
  readonly onCallStart?: (
    call: CallStartRequest,
  ) => CallStartDecision | undefined | Promise<CallStartDecision | undefined>;
  /** After each spoken turn, the caller's or the agent's. */
  readonly onTurn?: (turn: CallTurn, call: LiveCall) => void | Promise<void>;
  /** Once the call is over (and analysed, when the agent has an analysis plan). */
  readonly onCallEnd?: (record: CallRecord) => void | Promise<void>;
}

/** How long `onCallStart` may take before the call goes on with the routed agent, ms. */
export const CALL_START_HOOK_TIMEOUT_MS = 5000;

/** Asks `onCallStart`, its answer read as the webhook's is. Never throws. */
export async function askCallStartHook(
  hook: NonNullable<AgentCode["onCallStart"]>,
  request: CallStartRequest,
  timeoutMs = CALL_START_HOOK_TIMEOUT_MS,
): Promise<WebhookResult> {
  const started = performance.now();
  const ms = () => Math.round((performance.now() - started) * 10) / 10;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), timeoutMs);
  });
  let answer: unknown;
  try {
    answer = await Promise.race([Promise.resolve().then(() => hook(request)), late]);
  } catch (err) {
    const detail = `onCallStart threw: ${err instanceof Error ? err.message : String(err)}`;
    return { ok: false, cause: "bad_answer", detail, ms: ms() };
  } finally {
    clearTimeout(timer);
  }
  if (answer === "late")
    return { ok: false, cause: "timeout", detail: `no answer within ${timeoutMs} ms`, ms: ms() };
  const parsed = callStartAnswerSchema.safeParse(answer ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.join(".") || "(the answer)";
    return { ok: false, cause: "bad_answer", detail: `${where}: ${issue.message}`, ms: ms() };
  }
  const checked: CallStartAnswer = parsed.data;
  return { ok: true, answer: checked, ms: ms() };
}
