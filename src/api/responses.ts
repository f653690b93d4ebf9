// E3 responses (OpenAI-Responses-compatible): one call, or an event stream whose sequence_number
// must run 0, 1, 2… without gaps, with a final-response helper.
import { type ClientContext, v1 } from "./context.ts";
import { SvcProtocolError, SvcStreamEventError } from "./errors.ts";
import type { CallOptions, Exchange } from "./http.ts";
import { type Accumulator, EventStream, parseData, sseEvents, streamEndedEarly } from "./stream.ts";
import { PATHS } from "./types/paths.ts";
import type {
  OutputItem,
  ResponseObject,
  ResponseStatus,
  ResponsesRequest,
  ResponsesStreamEvent,
} from "./types/responses.ts";
import { validateResponsesRequest } from "./validate.ts";

export type ResponsesCreateRequest = Omit<ResponsesRequest, "stream">;

const TERMINAL: Readonly<Record<string, ResponseStatus>> = {
  "response.completed": "completed",
  "response.incomplete": "incomplete",
  "response.failed": "failed",
};

/** Concatenated output_text of all message items. */
export function outputText(r: Pick<ResponseObject, "output">): string {
  return r.output
    .map((it) =>
      it.type === "message" ? it.content.map((p) => (p.type === "output_text" ? p.text : "")).join("") : "",
    )
    .join("");
}

/**
 * Rebuilds the response from events. The terminal event's `response` is authoritative when it
 * carries one; otherwise the last snapshot is completed with the items assembled from the events.
 */
export class ResponsesAccumulator implements Accumulator<ResponsesStreamEvent, ResponseObject> {
  private snapshot: ResponseObject | undefined;
  private readonly items: OutputItem[] = [];
  private final: ResponseObject | undefined;

  add(ev: ResponsesStreamEvent): void {
    switch (ev.type) {
      case "response.created":
      case "response.in_progress":
        this.snapshot = ev.response;
        break;
      case "response.output_item.added":
        this.items[ev.output_index] = structuredClone(ev.item);
        break;
      case "response.output_text.delta": {
        const it = this.items[ev.output_index];
        if (it?.type === "message") {
          it.content[ev.content_index] ??= { type: "output_text", text: "", annotations: [] };
          it.content[ev.content_index]!.text += ev.delta;
        }
        break;
      }
      case "response.reasoning_text.delta": {
        const it = this.items[ev.output_index];
        if (it?.type === "reasoning") {
          it.content ??= [];
          it.content[ev.content_index] ??= { type: "reasoning_text", text: "" };
          const part = it.content[ev.content_index]!;
          part.text = String(part.text ?? "") + ev.delta;
        }
        break;
      }
      case "response.function_call_arguments.delta": {
        const it = this.items[ev.output_index];
        if (it?.type === "function_call") it.arguments += ev.delta;
        break;
      }
      case "response.output_item.done":
        this.items[ev.output_index] = ev.item;
        break;
      default: {
        const status = TERMINAL[ev.type];
        if (status) {
          const r = (ev as { response?: ResponseObject }).response;
          this.final = r ?? this.rebuild(status);
        }
      }
    }
  }

  /** Text of message items so far. */
  get text(): string {
    return outputText({ output: this.items.filter((i) => i !== undefined) });
  }

  result(): ResponseObject {
    if (this.final) return this.final;
    throw new SvcProtocolError("responses stream: no terminal event");
  }

  private rebuild(status: ResponseStatus): ResponseObject {
    if (!this.snapshot)
      throw new SvcProtocolError("responses stream: terminal event before response.created");
    return { ...this.snapshot, status, output: this.items.filter((i) => i !== undefined) };
  }
}

export class ResponsesStream extends EventStream<ResponsesStreamEvent, ResponseObject> {
  private readonly accumulator: ResponsesAccumulator;

  constructor(open: (o: CallOptions) => Promise<Exchange>, opts: CallOptions) {
    const acc = new ResponsesAccumulator();
    super(open, decodeResponses, acc, opts);
    this.accumulator = acc;
  }

  async *textDeltas(): AsyncGenerator<string> {
    for await (const ev of this) if (ev.type === "response.output_text.delta" && ev.delta) yield ev.delta;
  }

  get textSoFar(): string {
    return this.accumulator.text;
  }

  /** Read to the end; the final response (status completed, incomplete or failed). */
  finalResponse(): Promise<ResponseObject> {
    return this.drain();
  }
}

async function* decodeResponses(ex: Exchange): AsyncGenerator<ResponsesStreamEvent> {
  const what = "responses stream";
  let expected = 0;
  for await (const sse of sseEvents(ex, what)) {
    const ev = parseData<ResponsesStreamEvent>(sse, what, ex.requestId);
    if (ev.sequence_number !== expected) {
      throw new SvcProtocolError(
        `${what}: sequence_number ${ev.sequence_number} where ${expected} was due (${ev.type})`,
        { requestId: ex.requestId },
      );
    }
    expected++;
    if (ev.type === "error") {
      throw new SvcStreamEventError(`${what}: ${ev.message ?? "error event"}`, ev, {
        requestId: ex.requestId,
        code: ev.code,
        param: ev.param,
      });
    }
    const last = TERMINAL[ev.type];
    // Marked before the yield: a reader may stop at the last event without asking for more.
    if (last) ex.sawLastEvent();
    yield ev;
    if (last) return;
  }
  throw streamEndedEarly(what, ex.requestId, "response.completed, response.incomplete or response.failed");
}

export class ResponsesApi {
  private readonly ctx: ClientContext;

  constructor(ctx: ClientContext) {
    this.ctx = ctx;
  }

  async create(req: ResponsesCreateRequest, opts: CallOptions = {}): Promise<ResponseObject> {
    const body: ResponsesRequest = { ...req, stream: false };
    validateResponsesRequest(body);
    const ex = await this.ctx.http.send({ method: "POST", path: v1(PATHS.responses), json: body }, opts);
    return ex.json<ResponseObject>();
  }

  stream(req: ResponsesCreateRequest, opts: CallOptions = {}): ResponsesStream {
    const body: ResponsesRequest = { ...req, stream: true };
    validateResponsesRequest(body);
    return new ResponsesStream(
      (o) =>
        this.ctx.http.send(
          { method: "POST", path: v1(PATHS.responses), json: body, accept: "text/event-stream" },
          o,
        ),
      opts,
    );
  }
}
