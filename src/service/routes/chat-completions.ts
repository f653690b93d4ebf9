// E1 POST /v1/chat/completions: parse and validate, resolve media, then either one JSON object
// (n choices) or an SSE stream of chunks ending with `data: [DONE]`.
import { performance } from "node:perf_hooks";
import { SSE_DONE } from "../../api/types/index.ts";
import { heldUntilGone } from "../conditions/index.ts";
import type { ServiceRoute } from "../context.ts";
import { parseChatCompletions } from "../formats/chat-completions/parse.ts";
import { ChatChunkRenderer, type ChatMeta, chatCompletion } from "../formats/chat-completions/render.ts";
import { collect } from "../generation/collect.ts";
import type { GenBatch } from "../generation/events.ts";
import { newId } from "../ids.ts";
import { SseWriter, sseData } from "../sse-writer.ts";
import { inBandError, pump, refusedByFault, withGeneration } from "./streaming.ts";

/** Media may come inline as Base64 (video under 128 MB → about 171 MB of JSON). */
export const CHAT_BODY_LIMIT = 180 * 1024 * 1024;

export const chatCompletionsRoute: ServiceRoute = async (app, { ctx }) => {
  app.post("/v1/chat/completions", { bodyLimit: CHAT_BODY_LIMIT }, async (request, reply) => {
    const startedAt = performance.now();
    const call = parseChatCompletions(request.body);
    const chat = ctx.chat;
    // Drawn for every stream, refused or not, so chat503's share does not shift chatStall's draws.
    const stall = call.stream && ctx.conditions.faults.meets("chatStall");
    if (await refusedByFault(ctx, request, reply, startedAt)) return reply;
    return withGeneration(chat, call.gen, request, reply, async (signal) => {
      const meta: ChatMeta = {
        id: newId("chatcmpl-"),
        created: Math.floor(Date.now() / 1000),
        model: call.gen.model,
        reasoningFormat: call.reasoningFormat,
      };
      const first = await chat.start(call.gen, signal);
      if (!call.stream) {
        const results = [await collect(first.batches, first.inputTokens)];
        for (let i = 1; i < call.n; i++) {
          const gen = await chat.start(call.gen, signal);
          results.push(await collect(gen.batches, gen.inputTokens));
        }
        await ctx.conditions.latency.after("chat", startedAt);
        return reply.send(chatCompletion(meta, results, first.inputTokens));
      }
      const sse = new SseWriter(reply, { notBefore: ctx.conditions.latency.after("chat", startedAt) });
      let offset = 0;
      let failed = false;
      let stalled = false;
      try {
        for (let i = 0; i < call.n && !sse.closed && !failed && !stalled; i++) {
          let gen = i === 0 ? first : await chat.start(call.gen, signal);
          if (stall) gen = { ...gen, batches: untilFirstDelta(gen.batches, () => (stalled = true)) };
          const r = new ChatChunkRenderer(meta, i, first.inputTokens, offset);
          const render = (batch: GenBatch) => {
            if (batch.some((e) => e.type === "error")) failed = true;
            return r.push(batch);
          };
          await pump(gen.batches, render, sse);
          offset += r.completionTokens;
        }
      } catch (err) {
        failed = true;
        await sse.write(sseData(inBandError(err)));
      }
      if (stalled && !sse.closed) {
        // A hosted stream that stalls: its first words, then nothing, the connection held open
        // until the client gives up (bounded here, then cut as a proxy's timeout would).
        ctx.conditions.faults.played("chatStall", request.log);
        await heldUntilGone(sse.signal);
        reply.raw.destroy();
        return reply;
      }
      sse.end(failed ? "" : sseData(SSE_DONE));
      return reply;
    });
  });
};

/** The batches up to the first one with content (a delta), then none: `onCut` when cut there. */
async function* untilFirstDelta(
  batches: AsyncIterable<GenBatch>,
  onCut: () => void,
): AsyncGenerator<GenBatch> {
  for await (const batch of batches) {
    yield batch;
    if (batch.some((e) => e.type === "delta")) {
      onCut();
      return;
    }
  }
}
