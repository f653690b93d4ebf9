// E6 speech recognition: one POST of Base64 audio, the transcript streamed back as SSE
// (transcript.text.delta …, then transcript.text.done), with helpers for the final text and usage.
import { endianness } from "node:os";
import { encodeBase64Into } from "../core/base64.ts";
import { type BacklogLimits, BoundedBody, DEFAULT_BACKLOG } from "./backlog.ts";
import { type ClientContext, speechPath } from "./context.ts";
import { AsrError, SvcProtocolError } from "./errors.ts";
import type { CallOptions, Exchange, HttpRequest, SvcLogger } from "./http.ts";
import { type Accumulator, EventStream, parseData, sseEvents, streamEndedEarly } from "./stream.ts";
import type {
  AsrFormat,
  AsrRequest,
  AsrStreamEvent,
  AsrTranscription,
  AsrUsage,
  TranscriptTextDeltaEvent,
} from "./types/asr.ts";
import { PATHS } from "./types/paths.ts";
import { validateAsrFormat } from "./validate.ts";

/** Audio bytes, 16-bit PCM samples, or a Base64 string. */
export type AudioInput = Uint8Array | Int16Array | ArrayBuffer | string;

export type AsrOptions = AsrTranscription;

export interface AsrResult {
  text: string;
  usage: AsrUsage;
  sessionId: string;
  /** The delta events, with timings when enable_timestamp was set. */
  deltas: TranscriptTextDeltaEvent[];
}

/** Format fields of mono (or n-channel) signed 16-bit little-endian PCM. */
export function pcm16Format(rate: number, channels = 1): AsrFormat {
  return { type: "pcm", codec: "pcm_s16le", rate, bits: 16, channel: channels };
}

const LITTLE_ENDIAN = endianness() === "LE";

/** The bytes of binary audio: a view where it can be, little-endian for 16-bit samples. */
function audioBytes(audio: Exclude<AudioInput, string>): Buffer {
  if (audio instanceof ArrayBuffer) return Buffer.from(audio);
  if (audio instanceof Int16Array && !LITTLE_ENDIAN) {
    const b = Buffer.alloc(audio.length * 2);
    for (let i = 0; i < audio.length; i++) b.writeInt16LE(audio[i]!, i * 2);
    return b;
  }
  return Buffer.from(audio.buffer, audio.byteOffset, audio.byteLength);
}

export function audioToBase64(audio: AudioInput): string {
  return typeof audio === "string" ? audio : audioBytes(audio).toString("base64");
}

class TranscriptAccumulator implements Accumulator<AsrStreamEvent, AsrResult> {
  readonly deltas: TranscriptTextDeltaEvent[] = [];
  private done: AsrResult | undefined;
  add(ev: AsrStreamEvent): void {
    if (ev.type === "transcript.text.delta") this.deltas.push(ev);
    else if (ev.type === "transcript.text.done")
      this.done = {
        text: ev.text,
        usage: ev.usage,
        sessionId: ev.meta?.session_id ?? "",
        deltas: this.deltas,
      };
  }
  get textSoFar(): string {
    return this.deltas.map((d) => d.delta).join("");
  }
  result(): AsrResult {
    if (!this.done) throw new SvcProtocolError("asr stream: no transcript.text.done");
    return this.done;
  }
}

export class AsrStream extends EventStream<AsrStreamEvent, AsrResult> {
  private readonly accumulator: TranscriptAccumulator;

  constructor(open: (o: CallOptions) => Promise<Exchange>, opts: CallOptions) {
    const acc = new TranscriptAccumulator();
    super(open, decodeAsr, acc, opts);
    this.accumulator = acc;
  }

  async *textDeltas(): AsyncGenerator<string> {
    for await (const ev of this) if (ev.type === "transcript.text.delta" && ev.delta) yield ev.delta;
  }

  /** Concatenated deltas received so far. */
  get textSoFar(): string {
    return this.accumulator.textSoFar;
  }

  /** Read to the end; the complete transcript, usage and session id. */
  finalResult(): Promise<AsrResult> {
    return this.drain();
  }

  async finalText(): Promise<string> {
    return (await this.drain()).text;
  }
}

async function* decodeAsr(ex: Exchange): AsyncGenerator<AsrStreamEvent> {
  const what = "asr stream";
  for await (const sse of sseEvents(ex, what)) {
    const ev = parseData<AsrStreamEvent>(sse, what, ex.requestId);
    if (ev.type === "error") {
      throw new AsrError(`${what}: ${ev.message ?? "error event"}`, ev, ev.meta?.session_id, ex.requestId);
    }
    const last = ev.type === "transcript.text.done";
    // Marked before the yield: a reader may stop at the last event without asking for more.
    if (last) ex.sawLastEvent();
    yield ev;
    if (last) return;
  }
  throw streamEndedEarly(what, ex.requestId, "transcript.text.done");
}

/**
 * Audio sent while it is captured: one E6 request whose JSON body streams (chunked transfer) with
 * audio.data last, growing with each write(). A service that reads bodies as they arrive (the local
 * one does) recognizes the speech meanwhile, so the transcript follows end() almost at once; any
 * other gets an ordinary body, just later. Never retried (the body cannot be replayed).
 */
export class AsrUpload {
  /** The transcript, streamed back once the body has ended. */
  readonly stream: AsrStream;
  readonly #body: BoundedBody;
  readonly #endBody: () => void;
  /** 0–2 bytes waiting for a whole Base64 group (room for 3: the group they start). */
  readonly #carry = Buffer.alloc(3);
  #carried = 0;
  #ended = false;

  constructor(
    head: string,
    open: (upload: NonNullable<HttpRequest["upload"]>, o: CallOptions) => Promise<Exchange>,
    call: CallOptions,
    backlog: Pick<BacklogLimits, "asrUploadBytes" | "onShed"> = DEFAULT_BACKLOG,
    logger?: SvcLogger,
  ) {
    // Audio the connection has not taken (a service that stopped reading) is bounded: the oldest
    // goes first, as whole Base64 groups, so the body stays valid and the latest speech is kept.
    let warned = false;
    this.#body = new BoundedBody(backlog.asrUploadBytes, (b64Bytes) => {
      const bytes = (b64Bytes / 4) * 3;
      backlog.onShed?.({ queue: "asr_upload", bytes });
      if (!warned) {
        warned = true;
        logger?.warn(
          { droppedBytes: bytes, boundBytes: backlog.asrUploadBytes },
          "asr upload: the service is not taking the audio; dropping its oldest part",
        );
      }
    });
    let endBody!: () => void;
    const ended = new Promise<void>((resolve) => {
      endBody = resolve;
    });
    this.#endBody = endBody;
    this.#body.write(Buffer.from(head), false);
    this.stream = new AsrStream((o) => open({ body: this.#body.stream, ended }, o), call);
  }

  /** Audio written but not yet taken by the connection, bytes of Base64. */
  get queuedBytes(): number {
    return this.#body.queuedBytes;
  }

  /** Adds audio (bytes in the declared format, or 16-bit PCM samples). Ignored after end(). */
  write(audio: Uint8Array | Int16Array): void {
    if (this.#ended) return;
    const bytes = audioBytes(audio);
    const carry = this.#carry;
    const carried = this.#carried;
    const total = carried + bytes.length;
    const whole = total - (total % 3);
    if (whole === 0) {
      carry.set(bytes, carried);
      this.#carried = total;
      return;
    }
    // One chunk per write, its Base64 encoded straight into it (no concatenation, no string).
    const out = Buffer.allocUnsafe((whole / 3) * 4);
    let at = 0;
    let from = 0;
    if (carried > 0) {
      from = 3 - carried;
      for (let i = 0; i < from; i++) carry[carried + i] = bytes[i]!;
      at = encodeBase64Into(carry, 0, 3, out, 0);
    }
    const end = from + (whole - (carried > 0 ? 3 : 0));
    encodeBase64Into(bytes, from, end, out, at);
    for (let i = end; i < bytes.length; i++) carry[i - end] = bytes[i]!;
    this.#carried = bytes.length - end;
    this.#body.write(out);
  }

  /** Ends the body; the transcript follows on `stream`. */
  end(): AsrStream {
    if (!this.#ended) {
      this.#ended = true;
      const rest = this.#carry.toString("base64", 0, this.#carried);
      this.#body.write(Buffer.from(`${rest}"}}`, "latin1"), false);
      this.#body.close();
      this.#endBody();
    }
    return this.stream;
  }

  /** Drops the request. */
  abort(): void {
    this.#ended = true;
    this.stream.abort();
  }
}

export class AsrApi {
  private readonly ctx: ClientContext;

  constructor(ctx: ClientContext) {
    this.ctx = ctx;
  }

  /** Submit audio and read the transcript as it is streamed back. */
  stream(audio: AudioInput, format: AsrFormat, options: AsrOptions = {}, call: CallOptions = {}): AsrStream {
    validateAsrFormat(format);
    const transcription: AsrTranscription = Object.fromEntries(
      Object.entries(options).filter(([, v]) => v !== undefined),
    );
    const body: AsrRequest = {
      audio: {
        data: audioToBase64(audio),
        input: Object.keys(transcription).length > 0 ? { transcription, format } : { format },
      },
    };
    const path = speechPath(this.ctx, PATHS.asrSse);
    return new AsrStream(
      (o) => this.ctx.http.send({ method: "POST", path, json: body, accept: "text/event-stream" }, o),
      call,
    );
  }

  /** Start a request whose audio is written as it is captured (see AsrUpload). */
  upload(format: AsrFormat, options: AsrOptions = {}, call: CallOptions = {}): AsrUpload {
    validateAsrFormat(format);
    const transcription: AsrTranscription = Object.fromEntries(
      Object.entries(options).filter(([, v]) => v !== undefined),
    );
    const shape: AsrRequest = {
      audio: {
        input: Object.keys(transcription).length > 0 ? { transcription, format } : { format },
        data: "",
      },
    };
    // `…,"data":""}}` less its last three characters: the body up to audio.data's opening quote.
    const head = JSON.stringify(shape).slice(0, -3);
    const path = speechPath(this.ctx, PATHS.asrSse);
    return new AsrUpload(
      head,
      (upload, o) => this.ctx.http.send({ method: "POST", path, upload, accept: "text/event-stream" }, o),
      call,
      this.ctx.backlog,
      this.ctx.logger,
    );
  }

  /** Submit audio and wait for the complete transcript. */
  recognize(
    audio: AudioInput,
    format: AsrFormat,
    options: AsrOptions = {},
    call: CallOptions = {},
  ): Promise<AsrResult> {
    return this.stream(audio, format, options, call).finalResult();
  }
}
