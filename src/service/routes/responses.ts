// E3 POST /v1/responses: one response object, or the event stream with one gapless sequence.
import { performance } from "node:perf_hooks";
import type { ServiceRoute } from "../context.ts";
import { parseResponses } from "../formats/responses/parse.ts";
import { type ResponseMeta, ResponsesStreamRenderer, responseObject } from "../formats/responses/render.ts";
import { collect } from "../generation/collect.ts";
import { newId } from "../ids.ts";
import { SseWriter } from "../sse-writer.ts";
import { CHAT_BODY_LIMIT } from "./chat-completions.ts";
import { inBandError, pump, refusedByFault, withGeneration } from "./streaming.ts";

export const responsesRoute: ServiceRoute = async (app, { ctx }) => {
  app.post("/v1/responses", { bodyLimit: CHAT_BODY_LIMIT }, async (request, reply) => {
    const startedAt = performance.now();
    const call = parseResponses(request.body);
    const chat = ctx.chat;
    if (await refusedByFault(ctx, request, reply, startedAt)) return reply;
    return withGeneration(chat, call.gen, request, reply, async (signal) => {
      const meta: ResponseMeta = {
        id: newId("resp_"),
        createdAt: Math.floor(Date.now() / 1000),
        model: call.gen.model,
        echo: call.echo,
      };
      const gen = await chat.start(call.gen, signal);
      if (!call.stream) {
        const response = responseObject(meta, await collect(gen.batches, gen.inputTokens));
        await ctx.conditions.latency.after("chat", startedAt);
        return reply.send(response);
      }

      const sse = new SseWriter(reply, { notBefore: ctx.conditions.latency.after("chat", startedAt) });
      const r = new ResponsesStreamRenderer(meta, gen.inputTokens);
      await sse.write(r.start());
      try {
        await pump(gen.batches, (batch) => r.push(batch), sse);
      } catch (err) {
        const { error } = inBandError(err);
        await sse.write(r.failure(error.message, typeof error.code === "string" ? error.code : undefined));
      }
      sse.end();
      return reply;
    });
  });
};
