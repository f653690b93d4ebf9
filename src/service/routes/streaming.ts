// Helpers the chat routes share: the frame of one generation request (the account's slot, media
// prepared, an abort signal for "the client went away", all released however it ends), the loop
// that feeds a generation's batches through a renderer into an SSE response with backpressure, and
// the refusal a failing hosted service gives (local.faults' chat503).
import type { FastifyReply, FastifyRequest } from "fastify";
import type { ErrorBody } from "../../api/types/index.ts";
import { overloaded } from "../conditions/index.ts";
import type { ServiceContext } from "../context.ts";
import type { ChatService } from "../engines/chat/chat-service.ts";
import { toApiError } from "../errors.ts";
import type { GenBatch } from "../generation/events.ts";
import type { GenRequest } from "../generation/request.ts";
import type { SseWriter } from "../sse-writer.ts";

/** Aborted when the connection closes before the response finished. */
export function abortOnClose(reply: FastifyReply): AbortSignal {
  const ac = new AbortController();
  reply.raw.on("close", () => {
    if (!reply.raw.writableFinished) ac.abort(new Error("client disconnected"));
  });
  return ac.signal;
}

/** Writes every batch's rendering; returns false when the client left before the end. */
export async function pump(
  batches: AsyncIterable<GenBatch>,
  render: (batch: GenBatch) => string,
  sse: SseWriter,
): Promise<boolean> {
  for await (const batch of batches) {
    const text = render(batch);
    if (text) await sse.write(text);
    if (sse.closed) return false;
  }
  return true;
}

/** The error body for a failure after the stream started (formats wrap it in their error event). */
export function inBandError(err: unknown): ErrorBody {
  return toApiError(err).toBody();
}

/** Runs `body` holding the account's generation slot, with the request's media prepared. */
export async function withGeneration<T>(
  chat: ChatService,
  gen: GenRequest,
  request: FastifyRequest,
  reply: FastifyReply,
  body: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const release = chat.acquire(request.account);
  const signal = abortOnClose(reply);
  let cleanup: (() => Promise<void>) | undefined;
  try {
    cleanup = await chat.prepare(gen, request.account);
    return await body(signal);
  } finally {
    release();
    await cleanup?.();
  }
}

/**
 * chat503: the request refused with 503 and the service's error body, after the chat delay (a
 * hosted service takes its round trip to refuse). True when it was; the route then answers nothing.
 */
export async function refusedByFault(
  ctx: ServiceContext,
  request: FastifyRequest,
  reply: FastifyReply,
  startedAt: number,
): Promise<boolean> {
  const faults = ctx.conditions.faults;
  if (!faults.meets("chat503")) return false;
  await ctx.conditions.latency.after("chat", startedAt);
  faults.played("chat503", request.log);
  void reply.code(503).send(overloaded("chat").toBody());
  return true;
}
