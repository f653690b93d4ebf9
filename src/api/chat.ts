// E1 chat completions: one call, or a stream of chunks with helpers for the text deltas and the
// final completion.
import { ChatAccumulator } from "./chat-accumulate.ts";
import { type ClientContext, v1 } from "./context.ts";
import { SvcStreamEventError } from "./errors.ts";
import type { CallOptions, Exchange } from "./http.ts";
import { EventStream, parseData, sseEvents, streamEndedEarly } from "./stream.ts";
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest } from "./types/chat.ts";
import { SSE_DONE } from "./types/chat.ts";
import type { ErrorBody } from "./types/errors.ts";
import { PATHS } from "./types/paths.ts";
import { validateChatRequest } from "./validate.ts";

export type ChatRequest = Omit<ChatCompletionRequest, "stream">;

export class ChatStream extends EventStream<ChatCompletionChunk, ChatCompletion> {
  private readonly accumulator: ChatAccumulator;

  constructor(open: (o: CallOptions) => Promise<Exchange>, opts: CallOptions) {
    const acc = new ChatAccumulator();
    super(open, decodeChat, acc, opts);
    this.accumulator = acc;
  }

  /** Content text of choice 0 as it arrives (empty deltas skipped). */
  async *textDeltas(): AsyncGenerator<string> {
    for await (const chunk of this) {
      const text = chunk.choices?.find((c) => (c.index ?? 0) === 0)?.delta?.content;
      if (text) yield text;
    }
  }

  /** Content of choice 0 received so far. */
  get contentSoFar(): string {
    return this.accumulator.content;
  }

  /** Read to the end; the completion a non-streaming call would have returned. */
  finalCompletion(): Promise<ChatCompletion> {
    return this.drain();
  }

  /** Read to the end; the content of choice 0. */
  async finalContent(): Promise<string> {
    return (await this.drain()).choices[0]?.message.content ?? "";
  }
}

async function* decodeChat(ex: Exchange): AsyncGenerator<ChatCompletionChunk> {
  const what = "chat stream";
  for await (const ev of sseEvents(ex, what)) {
    if (ev.data === SSE_DONE) {
      ex.sawLastEvent();
      return;
    }
    const data = parseData<ChatCompletionChunk | ErrorBody>(ev, what, ex.requestId);
    if ("error" in data && data.error) {
      throw new SvcStreamEventError(`${what}: ${data.error.message}`, data, {
        requestId: ex.requestId,
        type: data.error.type,
        code: data.error.code,
      });
    }
    yield data as ChatCompletionChunk;
  }
  throw streamEndedEarly(what, ex.requestId, "data: [DONE]");
}

export class ChatApi {
  private readonly ctx: ClientContext;

  constructor(ctx: ClientContext) {
    this.ctx = ctx;
  }

  /** Non-streaming completion. */
  async create(req: ChatRequest, opts: CallOptions = {}): Promise<ChatCompletion> {
    const body = { ...req, stream: false };
    validateChatRequest(body);
    const ex = await this.ctx.http.send(
      { method: "POST", path: v1(PATHS.chatCompletions), json: body },
      opts,
    );
    return ex.json<ChatCompletion>();
  }

  /** Streaming completion; the request starts now, errors surface when the stream is read. */
  stream(req: ChatRequest, opts: CallOptions = {}): ChatStream {
    const body = { ...req, stream: true };
    validateChatRequest(body);
    return new ChatStream(
      (o) =>
        this.ctx.http.send(
          { method: "POST", path: v1(PATHS.chatCompletions), json: body, accept: "text/event-stream" },
          o,
        ),
      opts,
    );
  }
}
