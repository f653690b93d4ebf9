// E4 speech synthesis over HTTP: binary audio, an SSE stream of Base64 audio chunks, or a URL.
import { type ClientContext, speechPath } from "./context.ts";
import { SvcStreamEventError } from "./errors.ts";
import type { CallOptions, Exchange } from "./http.ts";
import { type Accumulator, EventStream, parseData, sseEvents, streamEndedEarly } from "./stream.ts";
import { SSE_DONE } from "./types/chat.ts";
import { PATHS } from "./types/paths.ts";
import type { SpeechRequest, SpeechStreamEvent, SpeechUrlResult } from "./types/speech.ts";
import { validateSpeechRequest } from "./validate.ts";

export type SpeechParams = Omit<SpeechRequest, "stream_format" | "return_url">;

export interface SpeechAudio {
  audio: Uint8Array;
  /** As the server labelled it, e.g. `audio/mpeg`. */
  contentType: string;
  requestId: string | undefined;
}

function decodeBase64(b64: string): Uint8Array {
  const b = Buffer.from(b64, "base64");
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

class AudioCollector implements Accumulator<SpeechStreamEvent, Uint8Array> {
  private readonly parts: Uint8Array[] = [];
  add(ev: SpeechStreamEvent): void {
    if (ev.type === "speech.audio.delta" && ev.audio) this.parts.push(decodeBase64(ev.audio));
  }
  result(): Uint8Array {
    return Buffer.concat(this.parts);
  }
}

export class SpeechStream extends EventStream<SpeechStreamEvent, Uint8Array> {
  constructor(open: (o: CallOptions) => Promise<Exchange>, opts: CallOptions) {
    super(open, decodeSpeech, new AudioCollector(), opts);
  }

  /** Decoded audio chunks as they arrive (each playable in order). */
  async *audioChunks(): AsyncGenerator<Uint8Array> {
    for await (const ev of this)
      if (ev.type === "speech.audio.delta" && ev.audio) yield decodeBase64(ev.audio);
  }

  /** Read to the end; all chunks concatenated. */
  collect(): Promise<Uint8Array> {
    return this.drain();
  }
}

async function* decodeSpeech(ex: Exchange): AsyncGenerator<SpeechStreamEvent> {
  const what = "speech stream";
  let done = false;
  for await (const sse of sseEvents(ex, what)) {
    if (sse.data === SSE_DONE) {
      ex.sawLastEvent();
      return;
    }
    const ev = parseData<SpeechStreamEvent>(sse, what, ex.requestId);
    if (ev.type === "speech.audio.error") {
      const msg = typeof ev.message === "string" ? ev.message : JSON.stringify(ev);
      throw new SvcStreamEventError(`${what}: ${msg}`, ev, { requestId: ex.requestId, type: ev.type });
    }
    yield ev;
    if (ev.type === "speech.audio.done") done = true;
  }
  if (!done) throw streamEndedEarly(what, ex.requestId, "speech.audio.done");
}

export class SpeechApi {
  private readonly ctx: ClientContext;

  constructor(ctx: ClientContext) {
    this.ctx = ctx;
  }

  private path(): string {
    return speechPath(this.ctx, PATHS.speech);
  }

  /** The audio file as bytes (format per response_format, default mp3). */
  async create(req: SpeechParams, opts: CallOptions = {}): Promise<SpeechAudio> {
    const body: SpeechRequest = { ...req, stream_format: "audio" };
    validateSpeechRequest(body);
    const ex = await this.ctx.http.send(
      { method: "POST", path: this.path(), json: body, accept: "*/*" },
      opts,
    );
    const contentType = ex.header("content-type") ?? "application/octet-stream";
    return { audio: await ex.bytes(), contentType, requestId: ex.requestId };
  }

  /** `return_url: true`: a URL of the audio file (valid 12 hours) instead of the audio. */
  async url(req: SpeechParams, opts: CallOptions = {}): Promise<SpeechUrlResult> {
    const body: SpeechRequest = { ...req, return_url: true };
    validateSpeechRequest(body);
    const ex = await this.ctx.http.send({ method: "POST", path: this.path(), json: body }, opts);
    return ex.json<SpeechUrlResult>();
  }

  /** `stream_format: sse`: Base64 audio chunks as `speech.audio.delta` events. */
  stream(req: SpeechParams, opts: CallOptions = {}): SpeechStream {
    const body: SpeechRequest = { ...req, stream_format: "sse" };
    validateSpeechRequest(body);
    return new SpeechStream(
      (o) =>
        this.ctx.http.send({ method: "POST", path: this.path(), json: body, accept: "text/event-stream" }, o),
      opts,
    );
  }
}
