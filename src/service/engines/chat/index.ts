// Chooses and builds the chat engine from the service options.
import type { Transcriber } from "../../media/transcriber.ts";
import type { ChatEngine } from "./engine.ts";
import { OpenAiCompatibleEngine } from "./openai-compatible.ts";
import { loadAgent } from "./scripted/agent.ts";
import { ScriptedEngine } from "./scripted/engine.ts";

export interface ChatEngineOptions {
  /** Default: `openai-compatible` when an upstream is set, else `scripted`. */
  engine?: "scripted" | "openai-compatible";
  /** Chat-completions base URL (…/v1) for the openai-compatible engine. */
  upstream?: string;
  upstreamModel?: string;
  upstreamApiKey?: string;
  /** YAML file of the scripted agent; default: the shipped demo hotline. */
  agentFile?: string;
  /** Milliseconds between words streamed by the scripted engine (default 15). */
  paceMs?: number;
}

export const DEFAULT_PACE_MS = 15;

/** The chat engine the options choose: the one named, else `openai-compatible` when an upstream is set. */
export function chatEngineKind(
  engine: ChatEngineOptions["engine"] | undefined,
  upstream: string | undefined,
): "scripted" | "openai-compatible" {
  return engine ?? (upstream ? "openai-compatible" : "scripted");
}

export function createChatEngine(
  opts: ChatEngineOptions,
  transcriber: () => Transcriber | undefined,
): ChatEngine {
  if (chatEngineKind(opts.engine, opts.upstream) === "openai-compatible") {
    if (!opts.upstream)
      throw new Error("the openai-compatible chat engine needs an upstream URL (SVC_CHAT_UPSTREAM)");
    const o: { baseUrl: string; model?: string; apiKey?: string } = { baseUrl: opts.upstream };
    if (opts.upstreamModel) o.model = opts.upstreamModel;
    if (opts.upstreamApiKey) o.apiKey = opts.upstreamApiKey;
    return new OpenAiCompatibleEngine(o);
  }
  return new ScriptedEngine({
    agent: loadAgent(opts.agentFile),
    paceMs: opts.paceMs ?? DEFAULT_PACE_MS,
    transcriber,
  });
}
