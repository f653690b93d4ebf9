// One E5 WebSocket session: the spec's state machine. connected → (tts.create) created → text is
// buffered and cut into sentences (default or sentence mode); every sentence is synthesized in
// order and sent as sentence.start, audio.delta…, sentence.end; tts.text.flush releases the buffer
// now; tts.text.done (or 60 s without a client message) finishes the buffered text, sends
// tts.response.audio.done with all of the session's audio and closes. Client mistakes get a
// tts.response.error naming the problem and the session stays usable.
import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import { concatPcm } from "../../../codecs/pcm.ts";
import { LIMITS } from "../../api/types/limits.ts";
import { TTS_MODES, TTS_WS_FORMATS } from "../../api/types/tts-ws.ts";
import { isObject, type JsonObject } from "../../core/guards.ts";
import type { TtsEngine } from "../engines/tts/engine.ts";
import type { ClonedVoiceResolver } from "../engines/tts/voices.ts";
import { ApiError } from "../errors.ts";
import { createDeltaEncoder, type DeltaEncoder, type OutputFormat } from "../speech/formats.ts";
import {
  E5_FIELDS,
  ParamError,
  parseSynthesisParams,
  type SynthesisParams,
  spokenText,
} from "../speech/params.ts";
import { type PrefetchedSpeech, prefetchSpeech, renderSpeech } from "../speech/render.ts";
import { type SegmentMode, SentenceSegmenter } from "../speech/segmenter.ts";

/** The part of a WebSocket the session uses (ws's WebSocket fits). */
export interface SessionSocket {
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

export interface RealtimeSessionOptions {
  model: string;
  account: string;
  tts: TtsEngine;
  clonedVoices?: ClonedVoiceResolver | undefined;
  /** Inactivity before the session finishes by itself; default 60 s. */
  idleMs?: number;
  log?: Logger;
}

type State = "connected" | "created" | "finishing" | "closed";

/** Chunk-level formats gather this much audio per delta after the first one. */
const DELTA_MIN_SECONDS = 0.25;

export class RealtimeTtsSession {
  readonly sessionId = `sess_${randomBytes(12).toString("hex")}`;
  private readonly socket: SessionSocket;
  private readonly opts: RealtimeSessionOptions;
  private readonly idleMs: number;
  private readonly eventPrefix = `evt_${randomBytes(6).toString("hex")}_`;
  private eventSeq = 0;
  private state: State = "connected";
  private idleTimer: NodeJS.Timeout | undefined;
  private params: SynthesisParams | undefined;
  private segmenter: SentenceSegmenter | undefined;
  private encoder: DeltaEncoder | undefined;
  private readonly pcm: Int16Array[] = [];
  /** Sentences are spoken one after another, in order. */
  private queue: Promise<void> = Promise.resolve();
  /** Cancels the synthesis under way (an upstream request) when the peer goes away. */
  private readonly abort = new AbortController();

  constructor(socket: SessionSocket, opts: RealtimeSessionOptions) {
    this.socket = socket;
    this.opts = opts;
    this.idleMs = opts.idleMs ?? LIMITS.ttsIdleMs;
  }

  /** Connection accepted: announce the session id and start the idle clock. */
  start(): void {
    this.emit("tts.connection.done", {});
    this.touch();
  }

  private emit(type: string, data: JsonObject): void {
    if (this.state === "closed") return;
    const event = {
      type,
      data: { session_id: this.sessionId, ...data },
      event_id: `${this.eventPrefix}${++this.eventSeq}`,
    };
    this.socket.send(JSON.stringify(event));
  }

  private error(code: string, message: string, detail?: unknown): void {
    this.emit("tts.response.error", { code, message, details: { error: detail ?? message } });
  }

  private touch(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    if (this.state === "finishing" || this.state === "closed") return;
    this.idleTimer = setTimeout(() => this.finish("idle"), this.idleMs);
    this.idleTimer.unref?.();
  }

  onMessage(raw: string | Buffer, isBinary = false): void {
    if (this.state === "closed") return;
    this.touch();
    try {
      const problem = this.handle(raw, isBinary);
      if (problem) this.error("400", problem.message, problem.detail);
    } catch (err) {
      // A bug must not take the process down with it: report it on this session only.
      this.opts.log?.error({ err, session: this.sessionId }, "tts session message failed");
      this.error("500", `internal error: ${(err as Error).message}`, String(err));
    }
  }

  /** Acts on one client message; returns what was wrong with it, if anything. */
  private handle(raw: string | Buffer, isBinary: boolean): { message: string; detail?: unknown } | undefined {
    if (isBinary) return { message: "binary messages are not supported: send JSON text messages" };
    let msg: unknown;
    try {
      msg = JSON.parse(raw.toString());
    } catch (err) {
      return { message: `message is not valid JSON: ${(err as Error).message}` };
    }
    if (!isObject(msg) || typeof msg.type !== "string")
      return { message: "a message is a JSON object {type, data}" };
    const type = msg.type;
    const known = ["tts.create", "tts.text.delta", "tts.text.flush", "tts.text.done"];
    if (!known.includes(type)) {
      return { message: `unknown message type "${type}"; expected one of ${known.join(", ")}` };
    }
    const data = msg.data;
    if (!isObject(data)) return { message: `${type}: data must be an object with session_id` };
    if (data.session_id !== this.sessionId) {
      const got = JSON.stringify(data.session_id ?? null);
      return {
        message: `${type}: session_id ${got} does not match this connection's session (${this.sessionId})`,
      };
    }
    if (this.state === "finishing")
      return { message: `${type}: the session is finishing after tts.text.done` };
    if (type === "tts.create") return this.create(data);
    if (this.state !== "created") return { message: `${type} before tts.create: create the session first` };
    if (type === "tts.text.delta") return this.delta(data);
    if (type === "tts.text.flush") {
      this.emit("tts.text.flushed", {});
      this.enqueue(this.segmenter!.flush());
    } else {
      this.finish("done");
    }
    return undefined;
  }

  private create(data: JsonObject): { message: string; detail?: unknown } | undefined {
    if (this.state !== "connected") return { message: "tts.create: the session is already created" };
    try {
      const params = parseSynthesisParams(
        data,
        this.opts.model,
        E5_FIELDS,
        this.opts.account,
        this.opts.clonedVoices,
      );
      const format = (data.response_format ?? "mp3") as OutputFormat;
      if (!(TTS_WS_FORMATS as readonly unknown[]).includes(format)) {
        throw new ParamError("response_format", `must be one of ${TTS_WS_FORMATS.join(", ")}`);
      }
      const mode = (data.mode ?? "default") as SegmentMode;
      if (!(TTS_MODES as readonly unknown[]).includes(mode)) {
        throw new ParamError("mode", `must be one of ${TTS_MODES.join(", ")}`);
      }
      this.params = params;
      this.segmenter = new SentenceSegmenter(mode);
      this.encoder = createDeltaEncoder(format, params.sampleRate);
    } catch (err) {
      if (err instanceof ParamError)
        return { message: `tts.create: ${err.message}`, detail: { param: err.param } };
      throw err;
    }
    this.state = "created";
    this.emit("tts.response.created", {});
    return undefined;
  }

  private delta(data: JsonObject): { message: string } | undefined {
    const text = data.text;
    if (typeof text !== "string") return { message: "tts.text.delta: text is required (a string)" };
    const chars = [...text].length;
    if (chars > LIMITS.ttsDeltaMaxChars) {
      return {
        message: `tts.text.delta: text is at most ${LIMITS.ttsDeltaMaxChars} characters, got ${chars}`,
      };
    }
    for (const sentence of this.segmenter!.push(text)) this.enqueue(sentence);
    return undefined;
  }

  private enqueue(sentence: string): void {
    if (!sentence || this.state === "closed") return;
    const text = spokenText(sentence, this.params!);
    if (!text) return;
    // An engine that can (an upstream server) starts each sentence as soon as it is complete, while
    // the ones before it still play; the audio still goes out strictly in order.
    const ahead = this.opts.tts.concurrent
      ? prefetchSpeech(this.opts.tts, text, this.params!, this.abort.signal)
      : undefined;
    this.queue = this.queue.then(() => this.speak(text, ahead));
  }

  private sendDelta(audio: Uint8Array, samples: number, status: "unfinished" | "finished"): void {
    this.emit("tts.response.audio.delta", {
      status,
      audio: Buffer.from(audio.buffer, audio.byteOffset, audio.byteLength).toString("base64"),
      duration: samples / this.params!.sampleRate,
    });
  }

  private async speak(text: string, ahead: PrefetchedSpeech | undefined): Promise<void> {
    if (this.state === "closed") return;
    const params = this.params!;
    const enc = this.encoder!;
    this.emit("tts.response.sentence.start", { text, started_at: Date.now() });
    const sentencePcm: Int16Array[] = [];
    let pending: Int16Array[] = [];
    let pendingSamples = 0;
    let sentAny = false;
    const sendPending = (last: boolean) => {
      const pcm = concatPcm(pending);
      this.sendDelta(enc.chunk(pcm, last), pcm.length, last ? "finished" : "unfinished");
      sentAny = true;
      pending = [];
      pendingSamples = 0;
    };
    try {
      const onPcm = (pcm: Int16Array) => {
        sentencePcm.push(pcm);
        if (!enc.chunked || this.state === "closed") return;
        // Hold one chunk back so the sentence's last delta can say "finished"; the first delta
        // leaves as soon as a second chunk exists, later ones gather DELTA_MIN_SECONDS.
        if (pending.length > 0 && (!sentAny || pendingSamples >= DELTA_MIN_SECONDS * params.sampleRate)) {
          sendPending(false);
        }
        pending.push(pcm);
        pendingSamples += pcm.length;
      };
      await (ahead
        ? ahead.attach(onPcm)
        : renderSpeech(this.opts.tts, text, params, onPcm, this.abort.signal));
      const all = concatPcm(sentencePcm);
      this.pcm.push(all);
      if (enc.chunked) sendPending(true);
      else this.sendDelta(await enc.sentence(all), all.length, "finished");
    } catch (err) {
      if ((this.state as State) === "closed") return;
      this.opts.log?.error({ err, session: this.sessionId }, "synthesis failed");
      // An upstream's overload stays 503 (the spec's overload code); everything else is 500.
      const code = err instanceof ApiError && err.status === 503 ? "503" : "500";
      this.error(code, `synthesis failed: ${(err as Error).message}`, String(err));
    }
    this.emit("tts.response.sentence.end", { text, ended_at: Date.now() });
  }

  /** Done or idle: speak what is buffered, send all audio, close. */
  private finish(reason: "done" | "idle"): void {
    if (this.state === "finishing" || this.state === "closed") return;
    const wasCreated = this.state === "created";
    this.state = "finishing";
    if (this.idleTimer) clearTimeout(this.idleTimer);
    if (wasCreated) this.enqueue(this.segmenter!.flush());
    this.queue = this.queue.then(async () => {
      let audio: Uint8Array = new Uint8Array(0);
      if (wasCreated && this.encoder) {
        try {
          audio = await this.encoder.all(concatPcm(this.pcm));
        } catch (err) {
          this.error("500", `encoding the session audio failed: ${(err as Error).message}`, String(err));
        }
      }
      this.emit("tts.response.audio.done", {
        audio: Buffer.from(audio.buffer, audio.byteOffset, audio.byteLength).toString("base64"),
      });
      this.state = "closed";
      this.socket.close(1000, reason === "idle" ? "idle timeout" : "done");
    });
  }

  /** The peer went away. */
  onClose(): void {
    this.state = "closed";
    this.abort.abort(new Error("the client closed the session"));
    if (this.idleTimer) clearTimeout(this.idleTimer);
  }
}
