// The scripted chat engine: decides the reply with the agent's rules, then streams it word by word
// at a fixed pace: optional reasoning first, then the text, then the tool call (arguments in a few
// JSON fragments). Audio parts of the caller's turn are transcribed through the injected
// Transcriber (the ASR engine) before deciding.
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { ApiError } from "../../../errors.ts";
import type { GenBatch, GenEvent } from "../../../generation/events.ts";
import type { GenRequest, MediaPart } from "../../../generation/request.ts";
import type { Transcriber } from "../../../media/transcriber.ts";
import type { ChatEngine, EngineCall } from "../engine.ts";
import type { Agent } from "./agent.ts";
import { decide } from "./decide.ts";
import { jsonReply, schemaInPrompt } from "./json-reply.ts";
import { reasoningText } from "./reasoning.ts";
import { jsonPieces, wordPieces } from "./words.ts";

export interface ScriptedEngineOptions {
  agent: Agent;
  /** Milliseconds between streamed pieces; 0 streams as fast as the client reads. */
  paceMs: number;
  /** The ASR seam: returns the transcriber once one is registered. */
  transcriber?: () => Transcriber | undefined;
}

type Planned =
  | { kind: "text" | "reasoning"; pieces: string[] }
  | { kind: "tool_call"; name: string; callId: string; pieces: string[] };

export class ScriptedEngine implements ChatEngine {
  readonly name = "scripted";
  private readonly opts: ScriptedEngineOptions;

  constructor(opts: ScriptedEngineOptions) {
    this.opts = opts;
  }

  async open(req: GenRequest, call: EngineCall): Promise<AsyncIterable<GenBatch>> {
    const transcripts = await this.transcribe(req, call.signal);
    const d = decide(this.opts.agent, req, transcripts);
    const plan: Planned[] = [];
    if (req.reasoning?.emit) {
      plan.push({
        kind: "reasoning",
        pieces: wordPieces(reasoningText(this.opts.agent, d, req.reasoning.effort)),
      });
    }
    const text =
      req.output.kind === "json" && (d.text || !d.toolCall) ? jsonText(req, d.text, d.heard) : d.text;
    if (text) plan.push({ kind: "text", pieces: wordPieces(text) });
    if (d.toolCall) {
      plan.push({
        kind: "tool_call",
        name: d.toolCall.name,
        callId: `call_${randomBytes(12).toString("base64url")}`,
        pieces: jsonPieces(JSON.stringify(d.toolCall.arguments)),
      });
    }
    return paced(toBatches(plan), this.opts.paceMs, call.signal);
  }

  /** Transcripts of the audio parts in the caller's last turn (none without a transcriber). */
  private async transcribe(req: GenRequest, signal: AbortSignal): Promise<Map<MediaPart, string>> {
    const out = new Map<MediaPart, string>();
    const last = req.messages[req.messages.length - 1];
    const transcriber = this.opts.transcriber?.();
    if (!transcriber || last?.role !== "user") return out;
    for (const p of last.parts) {
      if (p.type !== "audio" || !p.resolved?.bytes) continue;
      try {
        out.set(
          p,
          await transcriber(
            { bytes: p.resolved.bytes, format: p.resolved.format, mime: p.resolved.mime },
            { signal },
          ),
        );
      } catch (err) {
        throw new ApiError(500, `${p.param}: transcription failed: ${(err as Error).message}`, {
          param: p.param,
          code: "transcription_failed",
        });
      }
    }
    return out;
  }
}

/** The JSON reply, shaped by the request's schema or one its system prompt gives. */
function jsonText(req: GenRequest, text: string, heard: string): string {
  if (req.output.kind !== "json") return text;
  const system = req.messages.flatMap((m) => (m.role === "system" ? [m.text] : []));
  return jsonReply({ text, conversation: heard }, req.output.schema ?? schemaInPrompt(system));
}

/** One batch per streamed piece; block boundaries and the finish ride with the nearest piece. */
function toBatches(plan: Planned[]): GenEvent[][] {
  const batches: GenEvent[][] = [];
  let current: GenEvent[] = [];
  plan.forEach((b, block) => {
    if (block > 0) current.push({ type: "block_stop", block: block - 1 });
    current.push(
      b.kind === "tool_call"
        ? { type: "block_start", block, kind: "tool_call", callId: b.callId, name: b.name }
        : { type: "block_start", block, kind: b.kind },
    );
    for (const text of b.pieces) {
      current.push({ type: "delta", block, text });
      batches.push(current);
      current = [];
    }
  });
  const tail: GenEvent[] = [...(batches.pop() ?? []), ...current];
  if (plan.length > 0) tail.push({ type: "block_stop", block: plan.length - 1 });
  tail.push({ type: "finish", reason: "stop" });
  batches.push(tail);
  return batches;
}

async function* paced(batches: GenEvent[][], paceMs: number, signal: AbortSignal): AsyncGenerator<GenBatch> {
  for (let i = 0; i < batches.length; i++) {
    if (i > 0 && paceMs > 0) await sleep(paceMs, undefined, { signal });
    yield batches[i]!;
  }
}
