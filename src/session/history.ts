// Conversation history for one call. Assistant turns keep only what the caller heard, so
// the model never believes it said what was cut off by a barge-in.
import type { ChatMessage, ToolCall } from "../api/types/index.ts";

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

export class ConversationHistory {
  readonly #system: string;
  readonly #messages: ChatMessage[] = [];
  readonly #maxMessages: number;

  constructor(systemPrompt: string, maxMessages = 60) {
    this.#system = systemPrompt;
    this.#maxMessages = maxMessages;
  }

  /** The messages to send: system prompt, then the most recent turns. */
  messages(): ChatMessage[] {
    return [{ role: "system", content: this.#system }, ...this.#messages];
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

  #push(message: ChatMessage): void {
    this.#messages.push(message);
    // Drop the oldest turns, never leaving a tool result without the call it answers.
    while (this.#messages.length > this.#maxMessages || this.#messages[0]?.role === "tool") {
      this.#messages.shift();
    }
  }
}
