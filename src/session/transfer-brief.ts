// What the person who answers a warm transfer is told before being asked to take the call: the
// operator's brief (its variables filled per call), or a summary of the conversation the chat
// model writes from the history. The summary is asked with a deadline: the caller is on hold, and
// a late or failed summary falls back on the caller's own last words.
import type { ChatMessage } from "../api/types/index.ts";
import type { Logger } from "../core/log.ts";
import type { ChatModel } from "./services.ts";

/** The question that ends every brief: how the person answers (person-answer.ts reads the words). */
export const ACCEPT_QUESTION = "Say yes or press 1 to take the call; say no or press 2 to decline.";

const SUMMARY_PROMPT =
  "You hand a phone call over to a colleague. In one or two short spoken sentences, say who is calling and what they want, from the conversation below. No lists, no markdown.";

/** Longest wait for the model's summary, ms. */
const SUMMARY_MS = 4000;

/** The conversation as a transcript: the caller's and the agent's words, tool traffic left out. */
export function transcriptOf(messages: readonly ChatMessage[]): string {
  const lines: string[] = [];
  for (const m of messages) {
    const text = typeof m.content === "string" ? m.content.trim() : "";
    if (!text || text.startsWith("(system:")) continue;
    if (m.role === "user") lines.push(`Caller: ${text}`);
    else if (m.role === "assistant") lines.push(`Agent: ${text}`);
  }
  return lines.join("\n");
}

/** The caller's last words, for a brief without a summary. */
function lastCallerWords(messages: readonly ChatMessage[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === "user" && typeof m.content === "string" && !m.content.startsWith("(system:"))
      return m.content.trim() || undefined;
  }
  return undefined;
}

/** The brief: `fixed` when the operator or the tool gave one, else the model's summary. */
export async function transferBrief(opts: {
  fixed: string | undefined;
  history: readonly ChatMessage[];
  chat: ChatModel;
  signal: AbortSignal;
  log: Logger;
}): Promise<string> {
  const intro = "Hello, I have a caller to transfer to you.";
  if (opts.fixed) return `${intro} ${opts.fixed} ${ACCEPT_QUESTION}`;
  const transcript = transcriptOf(opts.history);
  let summary = "";
  if (transcript) {
    const signal = AbortSignal.any([opts.signal, AbortSignal.timeout(SUMMARY_MS)]);
    try {
      const messages: ChatMessage[] = [
        { role: "system", content: SUMMARY_PROMPT },
        { role: "user", content: transcript },
      ];
      for await (const e of opts.chat.stream(messages, [], signal)) if (e.type === "text") summary += e.text;
    } catch (err) {
      opts.log.warn({ err: (err as Error).message }, "warm transfer: no summary from the model");
      summary = "";
    }
  }
  summary = summary.trim();
  if (!summary) {
    const last = lastCallerWords(opts.history);
    summary = last ? `The caller said: ${last}` : "";
  }
  return [intro, summary, ACCEPT_QUESTION].filter(Boolean).join(" ");
}
