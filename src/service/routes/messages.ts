// E2 POST /v1/messages (Anthropic-compatible): one JSON message, or the event stream with a ping
// whenever the stream has been idle for the ping interval.
import { performance } from "node:perf_hooks";
import type { ServiceRoute } from "../context.ts";
import { parseMessages } from "../formats/messages/parse.ts";
import { MessagesStreamRenderer, messagesMessage } from "../formats/messages/render.ts";
import { collect } from "../generation/collect.ts";
import { newId } from "../ids.ts";
import { SseWriter, sseEvent } from "../sse-writer.ts";
import { CHAT_BODY_LIMIT } from "./chat-completions.ts";
import { inBandError, pump, refusedByFault, withGeneration } from "./streaming.ts";

export const messagesRoute: ServiceRoute = async (app, { ctx }) => {
  app.post("/v1/messages", { bodyLimit: CHAT_BODY_LIMIT }, async (request, reply) => {
    const startedAt = performance.now();
    const call = parseMessages(request.body);
    const chat = ctx.chat;
    if (await refusedByFault(ctx, request, reply, startedAt)) return reply;
    return withGeneration(chat, call.gen, request, reply, async (signal) => {
      const meta = { id: newId("msg_"), model: call.gen.model };
      const gen = await chat.start(call.gen, signal);
      if (!call.stream) {
        const message = messagesMessage(meta, await collect(gen.batches, gen.inputTokens));
        await ctx.conditions.latency.after("chat", startedAt);
        return reply.send(message);
      }

      const sse = new SseWriter(reply, { notBefore: ctx.conditions.latency.after("chat", startedAt) });
      const r = new MessagesStreamRenderer(meta, gen.inputTokens);
      let last = Date.now();
      const write = (text: string) => {
        last = Date.now();
        return sse.write(text);
      };
      await write(r.start() + r.ping());
      const timer = setInterval(
        () => {
          if (Date.now() - last >= chat.pingIntervalMs) void write(r.ping());
        },
        Math.max(10, Math.floor(chat.pingIntervalMs / 4)),
      );
      try {
        await pump(
          gen.batches,
          (batch) => {
            last = Date.now();
            return r.push(batch);
          },
          sse,
        );
      } catch (err) {
        const { error } = inBandError(err);
        await sse.write(
          sseEvent("error", { type: "error", error: { type: error.type, message: error.message } }),
        );
      } finally {
        clearInterval(timer);
      }
      sse.end();
      return reply;
    });
  });
};
