// Token counts from a real BPE tokenizer (o200k_base via gpt-tokenizer), not character counts.
// Special-token strings in user text are counted as plain text, never as control tokens.
import { countTokens as bpeCount, decode, encode } from "gpt-tokenizer/encoding/o200k_base";
import type { GenRequest, MediaPart } from "./request.ts";

const PLAIN = { disallowedSpecial: new Set<string>() };

/** Per-message framing overhead and reply priming, as chat tokenizers count them. */
const PER_MESSAGE = 3;
const REPLY_PRIMING = 3;

export function countTokens(text: string): number {
  return text.length === 0 ? 0 : bpeCount(text, PLAIN);
}

/** The longest prefix of `text` that is at most `maxTokens` tokens. */
export function truncateToTokens(text: string, maxTokens: number): string {
  if (maxTokens <= 0) return "";
  const ids = encode(text, PLAIN);
  return ids.length <= maxTokens ? text : decode(ids.slice(0, maxTokens));
}

/**
 * Tokens a media part stands for: images by detail (low: a fixed 400-token thumbnail, as the spec
 * says; high: one token per 28×28 patch, at least the low count), video at 2 frames per second of
 * 64 tokens each, audio at 25 tokens per second. Estimates of what a multimodal model would spend.
 */
export function mediaTokens(part: MediaPart): number {
  const r = part.resolved;
  if (part.type === "image") {
    if (part.detail !== "high" || !r?.image) return 400;
    const patches = Math.ceil(r.image.width / 28) * Math.ceil(r.image.height / 28);
    return Math.min(16_384, Math.max(400, patches));
  }
  const seconds = r?.durationS ?? 0;
  if (part.type === "video") return Math.max(64, Math.ceil(seconds * 2) * 64);
  return Math.max(25, Math.ceil(seconds * 25));
}

/** Prompt tokens of a request: messages with framing, tool definitions, media estimates. */
export function promptTokens(req: GenRequest): number {
  let n = REPLY_PRIMING;
  for (const m of req.messages) {
    n += PER_MESSAGE;
    switch (m.role) {
      case "system":
        n += countTokens(m.text);
        break;
      case "user":
        for (const p of m.parts) n += p.type === "text" ? countTokens(p.text) : mediaTokens(p);
        break;
      case "assistant":
        n += countTokens(m.text);
        for (const c of m.toolCalls) n += countTokens(c.name) + countTokens(c.arguments) + PER_MESSAGE;
        break;
      case "tool":
        n += countTokens(m.content);
        break;
    }
  }
  if (req.tools.length > 0) n += countTokens(JSON.stringify(req.tools));
  return n;
}
