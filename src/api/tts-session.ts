// E5 speech synthesis over WebSocket. A session connects with the bearer header, waits for
// tts.connection.done, sends tts.create with the session_id, and then streams text in and audio
// out. Built for a call pipeline: open it early, sendText() LLM deltas as they come, flush() at the
// end of a turn, done() to finish, close() to drop it at once on barge-in.
import WebSocket from "ws";
import { decodeBase64Range } from "../core/base64.ts";
import type { BacklogLimits } from "./backlog.ts";
import { type ClientContext, speechPath } from "./context.ts";
import {
  errorFromStatus,
  SvcAbortError,
  SvcBackpressureError,
  SvcConnectionError,
  SvcProtocolError,
  SvcTimeoutError,
  TtsClosedError,
  TtsResponseError,
} from "./errors.ts";
import type { CallOptions, SvcLogger } from "./http.ts";
import { AsyncQueue } from "./queue.ts";
import { LIMITS } from "./types/limits.ts";
import { PATHS } from "./types/paths.ts";
import type { TtsTimestamp } from "./types/tts-ws.ts";
import {
  TTS_AUDIO_DONE_TYPES,
  type TtsClientEvent,
  type TtsCreateData,
  type TtsServerEvent,
} from "./types/tts-ws.ts";
import { validateTtsCreate } from "./validate.ts";

export interface TtsSessionOptions extends Omit<TtsCreateData, "session_id"> {
  /** `svc-tts-2`, `svcaudio-2.5-tts` (or the deprecated `svc-tts-vivid`). */
  model: string;
}

/** What a session yields, decoded: audio chunks, sentence boundaries, flush acks, the end. */
export type TtsOutput =
  | { type: "audio"; audio: Uint8Array; duration: number; status: "unfinished" | "finished" }
  | { type: "sentence.start"; text: string; startedAt: TtsTimestamp }
  | { type: "sentence.end"; text: string; endedAt: TtsTimestamp }
  | { type: "flushed" }
  /** All audio of the session, as the server sent it with the final event. */
  | { type: "done"; audio: Uint8Array };

export type TtsSessionState = "open" | "finishing" | "finished" | "closed" | "failed";

/** Why the session ended: done() answered, the server's 60 s idle rule, close(), an error. */
export type TtsEndReason = "done" | "idle" | "closed" | "error";

function b64(s: string): Uint8Array {
  const b = Buffer.from(s, "base64");
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/** Where an audio delta's Base64 audio lies in the message it came in (set by readAudioDelta). */
const RAW_AUDIO = Symbol("rawAudio");
interface RawAudio {
  msg: Buffer;
  start: number;
  end: number;
}
type QueuedEvent = TtsServerEvent & { [RAW_AUDIO]?: RawAudio };

const AUDIO_KEY = Buffer.from('"audio":"', "latin1");

/**
 * An audio delta read without a string of its audio: the rest of the message is parsed as JSON
 * with the audio value left empty, and the audio stays in the message's bytes until it is read
 * (decoded straight from them by the output iterator, or turned into its text for events()).
 * With no backslash in the message every quote delimits a JSON string, so the first `"audio":"`
 * is a key; the parsed rest must then be an audio delta with an empty audio, or the message goes
 * through the full parse. Most of a call's TTS traffic is these messages.
 */
function readAudioDelta(msg: Buffer): QueuedEvent | undefined {
  if (msg.indexOf(0x5c) >= 0) return undefined;
  const key = msg.indexOf(AUDIO_KEY);
  if (key < 0) return undefined;
  const start = key + AUDIO_KEY.length;
  const end = msg.indexOf(0x22, start);
  if (end < 0) return undefined;
  let ev: QueuedEvent;
  try {
    ev = JSON.parse(msg.toString("utf8", 0, start) + msg.toString("utf8", end)) as QueuedEvent;
  } catch {
    return undefined;
  }
  if (ev?.type !== "tts.response.audio.delta" || ev.data?.audio !== "") return undefined;
  ev[RAW_AUDIO] = { msg, start, end };
  return ev;
}

/** The delta's audio bytes, from its message's bytes when it was read by readAudioDelta. */
function deltaAudio(ev: QueuedEvent & { type: "tts.response.audio.delta" }): Uint8Array {
  const raw = ev[RAW_AUDIO];
  if (!raw) return b64(ev.data.audio);
  // Text outside the plain alphabet goes to Node's lenient decoder, as it did before.
  return (
    decodeBase64Range(raw.msg, raw.start, raw.end) ?? b64(raw.msg.toString("latin1", raw.start, raw.end))
  );
}

function isAudioDone(t: string): boolean {
  return (TTS_AUDIO_DONE_TYPES as readonly string[]).includes(t);
}

export class TtsSession implements AsyncIterable<TtsOutput> {
  readonly sessionId: string;
  readonly model: string;
  private readonly ws: WebSocket;
  private readonly queue = new AsyncQueue<QueuedEvent>();
  private readonly logger: SvcLogger | undefined;
  private readonly backlog: Pick<BacklogLimits, "ttsSendBytes" | "onShed"> | undefined;
  private st: TtsSessionState = "open";
  private reason: TtsEndReason | undefined;
  private lastActivity = Date.now();
  private readonly allAudio: {
    resolve: (a: Uint8Array) => void;
    reject: (e: unknown) => void;
    promise: Promise<Uint8Array>;
  };

  /** Use TtsApi.connect() (client.tts.connect) to open one. */
  constructor(
    ws: WebSocket,
    sessionId: string,
    model: string,
    early: TtsServerEvent[],
    logger: SvcLogger | undefined,
    backlog?: Pick<BacklogLimits, "ttsSendBytes" | "onShed">,
  ) {
    this.ws = ws;
    this.backlog = backlog;
    this.sessionId = sessionId;
    this.model = model;
    this.logger = logger;
    let resolve!: (a: Uint8Array) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise<Uint8Array>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    promise.catch(() => {}); // the error also reaches readers of the stream
    this.allAudio = { resolve, reject, promise };
    for (const ev of early) this.onEvent(ev);
    ws.on("message", (data) => {
      const delta = Buffer.isBuffer(data) ? readAudioDelta(data) : undefined;
      if (delta) {
        this.onEvent(delta);
        return;
      }
      let ev: TtsServerEvent;
      try {
        ev = JSON.parse(data.toString()) as TtsServerEvent;
      } catch (e) {
        this.fail(new SvcProtocolError("tts: server message is not JSON", { cause: e }));
        return;
      }
      this.onEvent(ev);
    });
    ws.on("close", (code, reasonBuf) => this.onClose(code, reasonBuf.toString()));
    ws.on("error", (e) => this.fail(new SvcConnectionError(`tts: ${e.message}`, { cause: e })));
  }

  get state(): TtsSessionState {
    return this.st;
  }

  /** True while text can still be sent. */
  get isOpen(): boolean {
    return this.st === "open" && this.ws.readyState === WebSocket.OPEN;
  }

  get endReason(): TtsEndReason | undefined {
    return this.reason;
  }

  /** Time (ms since epoch) of the last message this client sent. */
  get lastActivityAt(): number {
    return this.lastActivity;
  }

  /** When the server's 60 s idle rule will end the session if nothing more is sent. */
  get idleClosesAt(): number {
    return this.lastActivity + LIMITS.ttsIdleMs;
  }

  /** All audio of the session, from the final event; rejects if the session fails. */
  get finished(): Promise<Uint8Array> {
    return this.allAudio.promise;
  }

  /** Send text (LLM deltas as they come); text over the 1,000-character limit is sent in pieces. */
  sendText(text: string): void {
    if (text === "") return;
    const chars = [...text];
    for (let i = 0; i < chars.length; i += LIMITS.ttsDeltaMaxChars) {
      this.send({
        type: "tts.text.delta",
        data: { session_id: this.sessionId, text: chars.slice(i, i + LIMITS.ttsDeltaMaxChars).join("") },
      });
    }
  }

  /** Ask for the audio of the buffered text now (end of an LLM turn). */
  flush(): void {
    this.send({ type: "tts.text.flush", data: { session_id: this.sessionId } });
  }

  /** No more text: the server answers with the final audio event and closes. */
  done(): void {
    this.send({ type: "tts.text.done", data: { session_id: this.sessionId } });
    this.st = "finishing";
  }

  /** Drop the session at once (barge-in): no more events, readers see the end. */
  close(): void {
    if (this.st === "closed" || this.st === "finished" || this.st === "failed") {
      this.ws.terminate();
      return;
    }
    this.st = "closed";
    this.reason = "closed";
    this.ws.terminate();
    this.queue.end();
    this.allAudio.reject(
      new TtsClosedError("tts: session closed by the client", 1000, "client close", false),
    );
  }

  /** The typed server events, raw. (Read either this or the decoded outputs, not both.) */
  async *events(): AsyncGenerator<TtsServerEvent> {
    for await (const ev of this.queue) {
      const raw = ev[RAW_AUDIO];
      if (raw && ev.type === "tts.response.audio.delta") {
        ev.data.audio = raw.msg.toString("latin1", raw.start, raw.end);
        delete ev[RAW_AUDIO];
      }
      yield ev;
    }
  }

  /** Decoded outputs: audio chunks with their duration, sentence start/end with text, flush acks, the end. */
  async *[Symbol.asyncIterator](): AsyncGenerator<TtsOutput> {
    for await (const ev of this.queue) {
      switch (ev.type) {
        case "tts.response.audio.delta":
          yield {
            type: "audio",
            audio: deltaAudio(ev),
            duration: ev.data.duration,
            status: ev.data.status,
          };
          break;
        case "tts.response.sentence.start":
          yield { type: "sentence.start", text: ev.data.text, startedAt: ev.data.started_at };
          break;
        case "tts.response.sentence.end":
          yield { type: "sentence.end", text: ev.data.text, endedAt: ev.data.ended_at };
          break;
        case "tts.text.flushed":
          yield { type: "flushed" };
          break;
        case "tts.response.audio.done":
        case "response.audio.done":
          yield { type: "done", audio: b64(ev.data.audio ?? "") };
          break;
        default:
          break;
      }
    }
  }

  /** Audio chunks only. */
  async *audio(): AsyncGenerator<{ audio: Uint8Array; duration: number }> {
    for await (const out of this)
      if (out.type === "audio") yield { audio: out.audio, duration: out.duration };
  }

  private send(ev: TtsClientEvent): void {
    if (!this.isOpen) {
      const idle = this.reason === "idle";
      throw new TtsClosedError(
        `tts: cannot send ${ev.type}: session ${idle ? "ended by the 60 s idle rule" : this.st}`,
        1000,
        "",
        idle,
      );
    }
    this.lastActivity = Date.now();
    this.ws.send(JSON.stringify(ev));
    // A service that stopped reading leaves every event in the socket's buffer; past the bound the
    // session is given up (its reader sees the error), rather than text and memory piling up.
    const unsent = this.ws.bufferedAmount;
    if (this.backlog && unsent > this.backlog.ttsSendBytes) {
      this.backlog.onShed?.({ queue: "tts_send", bytes: unsent });
      this.fail(
        new SvcBackpressureError(
          `tts: the service is not reading the session (${unsent} bytes unsent, bound ${this.backlog.ttsSendBytes})`,
        ),
      );
    }
  }

  private onEvent(ev: TtsServerEvent): void {
    if (this.st === "closed" || this.st === "failed" || this.st === "finished") return;
    if (ev.type === "tts.response.error") {
      this.queue.push(ev);
      this.fail(
        new TtsResponseError(
          String(ev.data?.code ?? ""),
          String(ev.data?.message ?? ""),
          ev.data?.details,
          ev.data?.session_id,
        ),
      );
      return;
    }
    this.queue.push(ev);
    if (isAudioDone(ev.type)) {
      // Without our done(), the final event means the server's idle rule ended the session.
      this.reason = this.st === "finishing" ? "done" : "idle";
      this.st = "finished";
      this.queue.end();
      const audio = (ev as { data?: { audio?: string } }).data?.audio ?? "";
      this.allAudio.resolve(b64(audio));
    }
  }

  private onClose(code: number, reason: string): void {
    if (this.st === "closed" || this.st === "failed" || this.st === "finished") return;
    const idleFor = Date.now() - this.lastActivity;
    const idle = idleFor >= LIMITS.ttsIdleMs;
    this.fail(
      new TtsClosedError(
        `tts: connection closed before the session finished (code ${code}${reason ? `, ${reason}` : ""}${idle ? ", after 60 s idle" : ""})`,
        code,
        reason,
        idle,
      ),
    );
  }

  private fail(e: Error): void {
    if (this.st === "closed" || this.st === "failed" || this.st === "finished") return;
    this.logger?.warn({ sessionId: this.sessionId, error: e.message }, "tts session failed");
    this.st = "failed";
    this.reason = "error";
    this.queue.end(e);
    this.allAudio.reject(e);
    this.ws.terminate();
  }
}

export class TtsApi {
  private readonly ctx: ClientContext;

  constructor(ctx: ClientContext) {
    this.ctx = ctx;
  }

  /** Open a session: connect, wait for tts.connection.done, send tts.create, wait for tts.response.created. */
  async connect(opts: TtsSessionOptions, call: CallOptions = {}): Promise<TtsSession> {
    const { model, ...create } = opts;
    validateTtsCreate(model, create);
    const url = `${this.ctx.wsBaseURL}${speechPath(this.ctx, PATHS.realtimeAudio)}?model=${encodeURIComponent(model)}`;
    const timeoutMs = call.timeoutMs ?? this.ctx.timeoutMs;
    if (call.signal?.aborted) throw new SvcAbortError("tts connect: aborted");
    const ws = new WebSocket(url, {
      headers: { Authorization: `Bearer ${this.ctx.apiKey}`, ...call.headers },
      handshakeTimeout: timeoutMs,
    });
    this.ctx.logger?.debug({ url, model }, "tts connect");
    const early: TtsServerEvent[] = [];
    let sessionId = "";
    return await new Promise<TtsSession>((resolve, reject) => {
      const timer = setTimeout(
        () => finish(new SvcTimeoutError(`tts connect: no session within ${timeoutMs} ms`)),
        timeoutMs,
      );
      const onAbort = () => finish(new SvcAbortError("tts connect: aborted"));
      call.signal?.addEventListener("abort", onAbort, { once: true });
      let settled = false;
      const finish = (err?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        call.signal?.removeEventListener("abort", onAbort);
        ws.removeAllListeners();
        if (err) {
          ws.on("error", () => {});
          ws.terminate();
          reject(err);
        } else {
          resolve(new TtsSession(ws, sessionId, model, early, this.ctx.logger, this.ctx.backlog));
        }
      };
      ws.on("unexpected-response", (_req, res) => {
        const parts: Buffer[] = [];
        res.on("data", (c: Buffer) => parts.push(c));
        res.on("end", () =>
          finish(errorFromStatus(res.statusCode ?? 0, Buffer.concat(parts).toString("utf8"))),
        );
        res.on("error", () => finish(errorFromStatus(res.statusCode ?? 0, "")));
      });
      ws.on("error", (e) => finish(new SvcConnectionError(`tts connect: ${e.message}`, { cause: e })));
      ws.on("close", (code, r) =>
        finish(
          new TtsClosedError(`tts connect: closed during setup (code ${code})`, code, r.toString(), false),
        ),
      );
      ws.on("message", (data) => {
        let ev: TtsServerEvent;
        try {
          ev = JSON.parse(data.toString()) as TtsServerEvent;
        } catch (e) {
          finish(new SvcProtocolError("tts connect: server message is not JSON", { cause: e }));
          return;
        }
        if (ev.type === "tts.connection.done") {
          sessionId = ev.data.session_id;
          const msg: TtsClientEvent = { type: "tts.create", data: { ...create, session_id: sessionId } };
          ws.send(JSON.stringify(msg));
        } else if (ev.type === "tts.response.created") {
          finish();
        } else if (ev.type === "tts.response.error") {
          const d = ev.data;
          finish(new TtsResponseError(String(d.code), d.message, d.details, d.session_id));
        } else if (sessionId) {
          early.push(ev);
        } else {
          finish(new SvcProtocolError(`tts connect: ${ev.type} before tts.connection.done`));
        }
      });
    });
  }

  /** Speak a complete text in one session (mode `sentence` unless given) and return all of its audio. */
  async synthesize(text: string, opts: TtsSessionOptions, call: CallOptions = {}): Promise<Uint8Array> {
    const s = await this.connect({ mode: "sentence", ...opts }, call);
    s.sendText(text);
    s.done();
    const parts: Uint8Array[] = [];
    for await (const out of s) if (out.type === "audio") parts.push(out.audio);
    return Buffer.concat(parts);
  }
}
