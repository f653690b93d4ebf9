// Conversation history for one call. Assistant turns keep only what the caller heard, so
// the model never believes it said what was cut off by a barge-in.
//
// A call can last hours (a hotline, a voice channel), so what goes to the model is bounded by
// tokens, not by turns: the recent turns up to `maxTokens` (estimated as an o200k-style tokenizer
// would count them, see token-estimate.ts), and, for the turns that fell out, a digest of what was said
// in them, itself at most `digestTokens`, its oldest lines dropped first. The model's context,
// and the service's work per turn, then stop growing once the budget is reached.
import type { ChatMessage, ToolCall } from "../api/types/index.ts";
import type { HandoffHistory } from "../records/call-record.ts";
import { clipTokens, estimateTokens } from "./token-estimate.ts";

export interface SpokenSentence {
  text: string;
  /** Offset of the sentence's first sample in the turn's audio, ms. */
  startMs: number;
  durationMs: number;
}

/**
 * What of a turn the caller heard, from the sentences' audio spans and the heard position:
 * whole sentences heard, plus the proportional share of words of the one cut mid-way.
 */
export function heardText(sentences: readonly SpokenSentence[], heardMs: number): string {
  const parts: string[] = [];
  for (const s of sentences) {
    if (heardMs >= s.startMs + s.durationMs) {
      parts.push(s.text.trim());
      continue;
    }
    if (heardMs > s.startMs && s.durationMs > 0) {
      const words = s.text.trim().split(/\s+/);
      const n = Math.floor((words.length * (heardMs - s.startMs)) / s.durationMs);
      if (n > 0) parts.push(`${words.slice(0, n).join(" ")}…`);
    }
    break;
  }
  return parts.join(" ");
}

export interface HistoryBudget {
  /** Tokens of the turns sent verbatim (the system prompt and the digest not included). */
  maxTokens: number;
  /** Tokens of the digest of the turns that no longer fit (0: they are simply dropped). */
  digestTokens: number;
  /** A hard cap on messages as well, whatever their size. */
  maxMessages: number;
}

export const DEFAULT_HISTORY_BUDGET: HistoryBudget = { maxTokens: 2000, digestTokens: 300, maxMessages: 60 };

/** Chat framing per message, as chat tokenizers count it (role and separators). */
const PER_MESSAGE = 3;

export function tokensOf(text: string): number {
  return estimateTokens(text);
}

function messageTokens(m: ChatMessage): number {
  let n = PER_MESSAGE + (typeof m.content === "string" ? tokensOf(m.content) : 0);
  if (m.role === "assistant")
    for (const c of m.tool_calls ?? []) n += tokensOf(c.function.name) + tokensOf(c.function.arguments);
  return n;
}

const DIGEST_HEAD = "Earlier in this call (older turns, shortened):";

export class ConversationHistory {
  readonly #system: string;
  readonly #budget: HistoryBudget;
  readonly #messages: ChatMessage[] = [];
  /** Token count of each message of #messages, same index. */
  readonly #tokens: number[] = [];
  #total = 0;
  /** Lines of the digest, oldest first, and their tokens. */
  readonly #digest: { line: string; tokens: number }[] = [];
  #digestTotal = 0;
  #dropped = 0;

  constructor(systemPrompt: string, budget: Partial<HistoryBudget> = {}) {
    this.#system = systemPrompt;
    this.#budget = { ...DEFAULT_HISTORY_BUDGET, ...budget };
  }

  /** The messages to send: system prompt, the digest of older turns if any, then the recent turns. */
  messages(): ChatMessage[] {
    const out: ChatMessage[] = [{ role: "system", content: this.#system }];
    if (this.#digest.length)
      out.push({ role: "system", content: `${DIGEST_HEAD}\n${this.#digest.map((d) => d.line).join("\n")}` });
    for (const m of this.#messages) out.push(m);
    return out;
  }

  /** Tokens of the recent turns, of the digest, and how many messages left the recent turns. */
  get size(): { tokens: number; digestTokens: number; messages: number; dropped: number } {
    return {
      tokens: this.#total,
      digestTokens: this.#digestTotal,
      messages: this.#messages.length,
      dropped: this.#dropped,
    };
  }

  /**
   * The history another agent takes the call over with (handoff.ts): its own prompt and budget, and
   * of this conversation the turns as they are (`whole`), their words folded into its digest
   * (`summary`, at most its `digestTokens`, the newest kept), or nothing (`none`).
   */
  handedOver(
    systemPrompt: string,
    budget: Partial<HistoryBudget>,
    carry: HandoffHistory,
  ): ConversationHistory {
    const next = new ConversationHistory(systemPrompt, budget);
    if (carry === "none") return next;
    for (const d of this.#digest) next.#digestLine(d.line);
    for (const m of this.#messages) {
      if (carry === "whole") next.#push(m);
      else next.#fold(m);
    }
    return next;
  }

  addUser(text: string): void {
    this.#push({ role: "user", content: text });
  }

  addAssistant(text: string, toolCalls?: ToolCall[]): void {
    if (!text && !toolCalls?.length) return;
    const message: ChatMessage = { role: "assistant", content: text || null };
    if (toolCalls?.length) message.tool_calls = toolCalls;
    this.#push(message);
  }

  addToolResult(toolCallId: string, content: string): void {
    this.#push({ role: "tool", tool_call_id: toolCallId, content });
  }

  /** What an agent turn adds (tool calls and results, then the spoken answer), in order. */
  addReply(messages: readonly ChatMessage[]): void {
    for (const m of messages) {
      if (m.role === "assistant") this.addAssistant(m.content ?? "", m.tool_calls);
      else if (m.role === "tool") this.addToolResult(m.tool_call_id, m.content);
    }
  }

  #push(message: ChatMessage): void {
    const tokens = messageTokens(message);
    this.#messages.push(message);
    this.#tokens.push(tokens);
    this.#total += tokens;
    const { maxTokens, maxMessages } = this.#budget;
    // Drop the oldest turns (the newest message always stays), never leaving a tool result
    // without the call it answers.
    while (
      this.#messages.length > 1 &&
      (this.#total > maxTokens || this.#messages.length > maxMessages || this.#messages[0]!.role === "tool")
    ) {
      this.#total -= this.#tokens.shift()!;
      this.#fold(this.#messages.shift()!);
    }
  }

  /** A message leaving the recent turns: its words go into the digest (tool traffic does not). */
  #fold(m: ChatMessage): void {
    this.#dropped++;
    if (typeof m.content !== "string" || !m.content) return;
    if (m.role !== "user" && m.role !== "assistant") return;
    this.#digestLine(`${m.role === "user" ? "Caller" : "Agent"}: ${m.content}`);
  }

  #digestLine(words: string): void {
    const budget = this.#budget.digestTokens;
    if (budget <= 0) return;
    const line = clipTokens(words, budget);
    const tokens = tokensOf(line);
    this.#digest.push({ line, tokens });
    this.#digestTotal += tokens;
    while (this.#digestTotal > budget && this.#digest.length)
      this.#digestTotal -= this.#digest.shift()!.tokens;
  }
}
