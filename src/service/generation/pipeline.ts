// The generation pipeline between an engine and a renderer: counts tokens with the BPE tokenizer,
// enforces the output budget (max_tokens / max_output_tokens, reasoning included) and the stop
// sequences, guarantees one stop per started block and exactly one finish, and turns an engine
// failure mid-stream into an error event. Engines stay simple; every format gets the same rules.
import type { ChatEngine } from "../engines/chat/engine.ts";
import type { BlockKind, FinishReason, GenBatch, GenEvent, Usage } from "./events.ts";
import type { GenRequest } from "./request.ts";
import { StopScanner } from "./stop-scanner.ts";
import { countTokens, promptTokens, truncateToTokens } from "./tokens.ts";

export interface Generation {
  readonly inputTokens: number;
  readonly batches: AsyncIterable<GenBatch>;
}

/**
 * Opens a generation. Rejects (before anything is streamed) when the engine refuses the request;
 * `signal` is the client's: aborting it stops the engine.
 */
export async function startGeneration(
  engine: ChatEngine,
  req: GenRequest,
  signal: AbortSignal,
): Promise<Generation> {
  const inputTokens = promptTokens(req);
  const cut = new AbortController();
  const source = await engine.open(req, { signal: AbortSignal.any([signal, cut.signal]) });
  return { inputTokens, batches: govern(source, req, inputTokens, cut, signal) };
}

async function* govern(
  source: AsyncIterable<GenBatch>,
  req: GenRequest,
  inputTokens: number,
  cut: AbortController,
  clientSignal: AbortSignal,
): AsyncGenerator<GenBatch> {
  const it = source[Symbol.asyncIterator]();
  const budget = req.maxTokens ?? Number.POSITIVE_INFINITY;
  const usage: Usage = { inputTokens, outputTokens: 0, reasoningTokens: 0 };
  let open: { block: number; kind: BlockKind } | undefined;
  let scanner: StopScanner | undefined;
  let sawToolCall = false;
  let finished = false;
  let sourceDone = false;
  let out: GenEvent[] = [];

  const end = (reason: FinishReason, stopSequence?: string) => {
    if (open) out.push({ type: "block_stop", block: open.block });
    open = undefined;
    out.push({ type: "usage", usage: { ...usage } });
    out.push(
      stopSequence === undefined ? { type: "finish", reason } : { type: "finish", reason, stopSequence },
    );
    finished = true;
  };
  /** Emits text within the budget; false when the budget ran out (generation is then finished). */
  const emit = (block: number, text: string): boolean => {
    if (text.length === 0) return true;
    let tokens = countTokens(text);
    const over = usage.outputTokens + tokens > budget;
    if (over) {
      text = truncateToTokens(text, budget - usage.outputTokens);
      tokens = countTokens(text);
    }
    if (text.length > 0) {
      out.push({ type: "delta", block, text, tokens });
      usage.outputTokens += tokens;
      if (open?.kind === "reasoning") usage.reasoningTokens += tokens;
    }
    if (over) end("length");
    return !over;
  };

  try {
    while (!finished) {
      let next: IteratorResult<GenBatch>;
      try {
        next = await it.next();
      } catch (err) {
        sourceDone = true;
        if (clientSignal.aborted) return;
        out.push({ type: "error", message: `generation failed: ${(err as Error).message ?? String(err)}` });
        finished = true;
        break;
      }
      if (next.done) {
        sourceDone = true;
        break;
      }
      for (const ev of next.value) {
        if (finished) break;
        switch (ev.type) {
          case "block_start":
            if (open) out.push({ type: "block_stop", block: open.block });
            open = { block: ev.block, kind: ev.kind };
            if (ev.kind === "tool_call") sawToolCall = true;
            scanner = ev.kind === "text" && req.stop.length > 0 ? new StopScanner(req.stop) : undefined;
            out.push(ev);
            break;
          case "delta": {
            if (!open || open.block !== ev.block) break;
            if (!scanner) {
              emit(ev.block, ev.text);
              break;
            }
            const { emit: text, matched } = scanner.push(ev.text);
            if (emit(ev.block, text) && matched !== undefined) end("stop", matched);
            break;
          }
          case "block_stop":
            if (!open || open.block !== ev.block) break;
            if (scanner && !emit(ev.block, scanner.flush())) break;
            out.push(ev);
            open = undefined;
            scanner = undefined;
            break;
          case "finish":
            if (open && scanner && !emit(open.block, scanner.flush())) break;
            end(ev.reason === "stop" && sawToolCall ? "tool_calls" : ev.reason);
            break;
          case "error":
            out.push(ev);
            finished = true;
            break;
          case "usage":
            break;
        }
      }
      if (out.length > 0) {
        const batch = out;
        out = [];
        yield batch;
      }
    }
    if (!finished && !clientSignal.aborted) {
      if (open && scanner) emit(open.block, scanner.flush());
      if (!finished) end(sawToolCall ? "tool_calls" : "stop");
    }
    if (out.length > 0) yield out;
  } finally {
    if (!sourceDone) {
      // The engine is parked at a yield: let it clean up first, then abort whatever it still holds.
      try {
        await it.return?.();
      } catch {
        // an engine failing while it is being stopped changes nothing for the caller
      }
      cut.abort(new Error("generation ended"));
    }
  }
}
