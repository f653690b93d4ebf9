// E2 messages (Anthropic-compatible): one call, or an event stream with a final-message helper.
import { type ClientContext, v1 } from "./context.ts";
import { SvcProtocolError, SvcStreamEventError } from "./errors.ts";
import type { CallOptions, Exchange } from "./http.ts";
import { type Accumulator, EventStream, parseData, sseEvents, streamEndedEarly } from "./stream.ts";
import type {
  MessagesContentBlock,
  MessagesMessage,
  MessagesRequest,
  MessagesStopReason,
  MessagesStreamEvent,
  MessagesUsage,
} from "./types/messages.ts";
import { PATHS } from "./types/paths.ts";
import { validateMessagesRequest } from "./validate.ts";

export type MessagesCreateRequest = Omit<MessagesRequest, "stream">;

/** Folds message events into the final message; tool_use inputs are parsed from their JSON fragments. */
export class MessagesAccumulator implements Accumulator<MessagesStreamEvent, MessagesMessage> {
  private message: MessagesMessage | undefined;
  private readonly blocks: MessagesContentBlock[] = [];
  private readonly partialJson = new Map<number, string>();
  private stopReason: MessagesStopReason | undefined;
  private usage: MessagesUsage = { input_tokens: 0, output_tokens: 0 };

  add(ev: MessagesStreamEvent): void {
    switch (ev.type) {
      case "message_start": {
        const { usage, ...m } = ev.message;
        this.message = { ...m, content: [], stop_reason: "end_turn", usage: this.usage } as MessagesMessage;
        if (usage) this.usage = { ...usage };
        break;
      }
      case "content_block_start":
        this.blocks[ev.index] = { ...ev.content_block };
        break;
      case "content_block_delta": {
        const b = this.blocks[ev.index];
        if (!b) throw new SvcProtocolError(`messages stream: delta for block ${ev.index} before its start`);
        if (ev.delta.type === "text_delta" && b.type === "text") b.text += ev.delta.text;
        else if (ev.delta.type === "input_json_delta")
          this.partialJson.set(
            ev.index,
            (this.partialJson.get(ev.index) ?? "") + String(ev.delta.partial_json ?? ""),
          );
        break;
      }
      case "content_block_stop": {
        const b = this.blocks[ev.index];
        const json = this.partialJson.get(ev.index);
        if (b?.type === "tool_use" && json !== undefined) {
          try {
            b.input = json.trim() === "" ? {} : JSON.parse(json);
          } catch (e) {
            throw new SvcProtocolError(`messages stream: tool input of block ${ev.index} is not JSON`, {
              cause: e,
            });
          }
        }
        break;
      }
      case "message_delta":
        this.stopReason = ev.delta?.stop_reason ?? ev.stop_reason ?? this.stopReason;
        // message_delta counts are cumulative; keep input_tokens from message_start when absent.
        this.usage = { ...this.usage, ...ev.usage };
        break;
      default:
        break;
    }
  }

  /** Text of all text blocks so far. */
  get text(): string {
    return this.blocks.map((b) => (b.type === "text" ? b.text : "")).join("");
  }

  result(): MessagesMessage {
    if (!this.message) throw new SvcProtocolError("messages stream: no message_start");
    return {
      ...this.message,
      content: this.blocks.filter((b) => b !== undefined),
      stop_reason: this.stopReason ?? "end_turn",
      usage: this.usage,
    };
  }
}

export class MessagesStream extends EventStream<MessagesStreamEvent, MessagesMessage> {
  private readonly accumulator: MessagesAccumulator;

  constructor(open: (o: CallOptions) => Promise<Exchange>, opts: CallOptions) {
    const acc = new MessagesAccumulator();
    super(open, decodeMessages, acc, opts);
    this.accumulator = acc;
  }

  /** Text deltas as they arrive. */
  async *textDeltas(): AsyncGenerator<string> {
    for await (const ev of this) {
      if (ev.type === "content_block_delta" && ev.delta.type === "text_delta" && ev.delta.text)
        yield ev.delta.text;
    }
  }

  get textSoFar(): string {
    return this.accumulator.text;
  }

  /** Read to the end; the message a non-streaming call would have returned. */
  finalMessage(): Promise<MessagesMessage> {
    return this.drain();
  }

  /** Read to the end; the text of all text blocks. */
  async finalText(): Promise<string> {
    await this.drain();
    return this.accumulator.text;
  }
}

async function* decodeMessages(ex: Exchange): AsyncGenerator<MessagesStreamEvent> {
  const what = "messages stream";
  for await (const sse of sseEvents(ex, what)) {
    const ev = parseData<MessagesStreamEvent>(sse, what, ex.requestId);
    if (ev.type === "error") {
      throw new SvcStreamEventError(`${what}: ${ev.error?.message ?? "error event"}`, ev, {
        requestId: ex.requestId,
        type: ev.error?.type,
      });
    }
    const last = ev.type === "message_stop";
    // Marked before the yield: a reader may stop at the last event without asking for more.
    if (last) ex.sawLastEvent();
    yield ev;
    if (last) return;
  }
  throw streamEndedEarly(what, ex.requestId, "message_stop");
}

export class MessagesApi {
  private readonly ctx: ClientContext;

  constructor(ctx: ClientContext) {
    this.ctx = ctx;
  }

  async create(req: MessagesCreateRequest, opts: CallOptions = {}): Promise<MessagesMessage> {
    validateMessagesRequest(req);
    const ex = await this.ctx.http.send({ method: "POST", path: v1(PATHS.messages), json: req }, opts);
    return ex.json<MessagesMessage>();
  }

  stream(req: MessagesCreateRequest, opts: CallOptions = {}): MessagesStream {
    const body: MessagesRequest = { ...req, stream: true };
    validateMessagesRequest(body);
    return new MessagesStream(
      (o) =>
        this.ctx.http.send(
          { method: "POST", path: v1(PATHS.messages), json: body, accept: "text/event-stream" },
          o,
        ),
      opts,
    );
  }
}
