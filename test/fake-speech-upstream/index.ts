// A speech server that follows OpenAI's published audio API to the letter, for tests and the
// benchmark's upstream mode: POST /v1/audio/transcriptions (multipart: file, model, language,
// prompt, response_format json|text|srt|verbose_json|vtt, timestamp_granularities[]) and
// POST /v1/audio/speech (JSON: model, input, voice, response_format mp3|opus|aac|flac|wav|pcm,
// speed; the audio answered chunked as it is "produced").
//
// It takes no time of its own (the benchmark measures what the service adds) and it is honest
// about audio: speech is a tone code, one 60 ms tone per character, and recognition reads that
// code back out of whatever audio it is sent (Goertzel per block). So a round trip through the
// service (synthesis → resampling → encoding → decoding → recognition) only comes back word for
// word if every step kept the audio intact. A scripted transcript can replace the reading (a
// caller's espeak-ng speech in an e2e call carries no code).
import { spawn } from "node:child_process";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parseWav, wavHeader } from "../../codecs/wav.ts";
import {
  SPEECH_FORMATS,
  SPEECH_PCM_RATE,
  type SpeechFormat,
  type SpeechRequestBody,
  TIMESTAMP_GRANULARITIES,
  TRANSCRIPTION_FORMATS,
  type TranscriptionFormat,
  type TranscriptionSegment,
  type TranscriptionVerbose,
  type TranscriptionWord,
} from "../../src/service/engines/openai-audio.ts";

/** Tone code: one character per block. */
export const CHAR_MS = 60;
const FIRST = 32; // space
const LAST = 126; // ~
const BASE_HZ = 300;
const STEP_HZ = 50;
/** Characters per chunk of a speech answer. */
const CHARS_PER_CHUNK = 4;

export type Fault =
  /** Answers this HTTP status with OpenAI's JSON error body. */
  | { status: number }
  /** Accepts the request and never answers. */
  | { hang: true }
  /** Answers 200 with a body that is not what the API promises. */
  | { malformed: true }
  /** Speech only: sends some audio, then breaks the connection. */
  | { breakAfterChunks: number };

export interface RecordedRequest {
  path: string;
  headers: IncomingMessage["headers"];
  /** Transcriptions: the multipart fields (all values, repeated ones in order) and the file. */
  fields?: Record<string, string[]>;
  file?: { name: string; type: string; bytes: Uint8Array };
  /** Speech: the JSON body. */
  body?: SpeechRequestBody;
  /** performance.now() when the request had fully arrived, its first audio left, its answer was complete. */
  receivedAt: number;
  complete?: boolean;
  answeredAt?: number;
  firstChunkAt?: number;
}

export interface FakeSpeechUpstream {
  /** Root URL (the API is under /v1). */
  url: string;
  requests: RecordedRequest[];
  /** Transcripts answered instead of reading the tone code, first in first out. */
  transcripts: string[];
  /** Or a transcript chosen per request (when it returns a string); before `transcripts`. */
  transcribe?: ((audio: { pcm: Int16Array; rate: number }) => string | undefined) | undefined;
  /** Applies to the next requests of that endpoint until cleared. */
  faults: { asr?: Fault | undefined; tts?: Fault | undefined };
  /** Every request must carry `Authorization: Bearer <key>` when set. */
  apiKey?: string;
  /** When set, speech answers wait for it (a test holds a sentence back to see the next one asked). */
  holdSpeech?: Promise<void> | undefined;
  /** Resolves once `n` requests to `path` have fully arrived. */
  arrived(path: string, n: number): Promise<void>;
  close(): Promise<void>;
}

/** The tone code of `text` at 24 kHz (what the fake's speech answers carry as pcm). */
export function toneCode(text: string, rate = SPEECH_PCM_RATE): Int16Array {
  const per = Math.round((rate * CHAR_MS) / 1000);
  const out = new Int16Array(per * text.length);
  for (let c = 0; c < text.length; c++) {
    const code = Math.min(LAST, Math.max(FIRST, text.charCodeAt(c)));
    const hz = BASE_HZ + (code - FIRST) * STEP_HZ;
    for (let i = 0; i < per; i++) {
      const env = Math.min(1, i / 48, (per - i) / 48); // soft edges: no clicks across blocks
      out[c * per + i] = Math.round(9000 * env * Math.sin((2 * Math.PI * hz * i) / rate));
    }
  }
  return out;
}

function goertzel(pcm: Int16Array, from: number, to: number, hz: number, rate: number): number {
  const k = 2 * Math.cos((2 * Math.PI * hz) / rate);
  let s1 = 0;
  let s2 = 0;
  for (let i = from; i < to; i++) {
    const s = pcm[i]! + k * s1 - s2;
    s2 = s1;
    s1 = s;
  }
  return s1 * s1 + s2 * s2 - k * s1 * s2;
}

/** Reads the tone code back: one character per block, the middle of each block analysed. */
export function readToneCode(pcm: Int16Array, rate: number): string {
  const per = (rate * CHAR_MS) / 1000;
  // Blocks count from the first tone's onset: a codec may put silence (encoder delay) before it.
  let onset = pcm.findIndex((x) => Math.abs(x) > 2000);
  if (onset < 0) return "";
  onset = Math.max(0, onset - Math.round(rate * 0.002));
  let text = "";
  for (let b = 0; onset + (b + 1) * per <= pcm.length + per / 4; b++) {
    const from = Math.round(onset + b * per + per / 6);
    const to = Math.min(pcm.length, Math.round(onset + (b + 1) * per - per / 6));
    let energy = 0;
    for (let i = from; i < to; i++) energy += pcm[i]! * pcm[i]!;
    if (to <= from || energy / (to - from) < 1e5) continue; // silence (a codec's padding)
    let best = FIRST;
    let bestPower = -1;
    for (let code = FIRST; code <= LAST; code++) {
      const p = goertzel(pcm, from, to, BASE_HZ + (code - FIRST) * STEP_HZ, rate);
      if (p > bestPower) {
        bestPower = p;
        best = code;
      }
    }
    text += String.fromCharCode(best);
  }
  return text;
}

function apiError(res: ServerResponse, status: number, message: string, param: string | null = null): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: { message, type: "invalid_request_error", param, code: null } }));
}

/** The request body; its arrival time goes on the record (the fake's own time starts there). */
async function body(req: IncomingMessage, rec: RecordedRequest): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of req) parts.push(c as Buffer);
  rec.receivedAt = performance.now();
  return Buffer.concat(parts);
}

/** Any audio file to mono 16-bit PCM: WAV in-process, anything else through ffmpeg. */
async function decodeAudio(bytes: Uint8Array): Promise<{ pcm: Int16Array; rate: number }> {
  if (bytes.length >= 12 && Buffer.from(bytes.subarray(0, 4)).toString() === "RIFF") {
    const w = parseWav(bytes);
    if (w.channels !== 1) throw new Error("the fake reads mono audio only");
    return { pcm: w.samples, rate: w.sampleRate };
  }
  const out = await ffmpeg(["-i", "pipe:0", "-f", "s16le", "-ac", "1", "-ar", "16000", "pipe:1"], bytes);
  return { pcm: new Int16Array(out.buffer, out.byteOffset, out.byteLength >> 1), rate: 16000 };
}

function ffmpeg(args: string[], input: Uint8Array): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const p = spawn("ffmpeg", ["-hide_banner", "-loglevel", "error", ...args]);
    const out: Buffer[] = [];
    let err = "";
    p.stdout.on("data", (c: Buffer) => out.push(c));
    p.stderr.on("data", (c: Buffer) => {
      err += c;
    });
    p.on("error", reject);
    p.on("close", (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(err))));
    p.stdin.end(input);
  });
}

const FFMPEG_FORMATS: Readonly<Record<Exclude<SpeechFormat, "pcm" | "wav">, string[]>> = {
  mp3: ["-f", "mp3"],
  opus: ["-c:a", "libopus", "-f", "ogg"],
  aac: ["-c:a", "aac", "-f", "adts"],
  flac: ["-f", "flac"],
};
const CONTENT_TYPES: Readonly<Record<SpeechFormat, string>> = {
  mp3: "audio/mpeg",
  opus: "audio/ogg",
  aac: "audio/aac",
  flac: "audio/flac",
  wav: "audio/wav",
  pcm: "audio/pcm",
};

function stamp(ms: number, sep: "," | "."): string {
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor(ms / 60_000) % 60;
  const s = Math.floor(ms / 1000) % 60;
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${pad(h)}:${pad(m)}:${pad(s)}${sep}${pad(Math.round(ms % 1000), 3)}`;
}

export async function startFakeSpeechUpstream(): Promise<FakeSpeechUpstream> {
  const sockets = new Set<import("node:net").Socket>();
  const up: FakeSpeechUpstream = {
    url: "",
    requests: [],
    transcripts: [],
    faults: {},
    arrived: (path, n) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (up.requests.filter((r) => r.path === path && r.complete).length < n) return false;
          resolve();
          return true;
        };
        if (!check()) waiters.push(check);
      }),
    close: async () => {},
  };
  let waiters: (() => boolean)[] = [];
  const complete = (rec: RecordedRequest) => {
    rec.complete = true;
    waiters = waiters.filter((w) => !w());
  };

  async function transcriptions(req: IncomingMessage, res: ServerResponse, rec: RecordedRequest) {
    const type = req.headers["content-type"] ?? "";
    if (!type.startsWith("multipart/form-data")) {
      return apiError(res, 400, "Invalid Content-Type: expected multipart/form-data");
    }
    let form: FormData;
    try {
      const raw = await body(req, rec);
      form = await new Response(raw, { headers: { "content-type": type } }).formData();
    } catch (err) {
      return apiError(res, 400, `Could not parse multipart form: ${(err as Error).message}`);
    }
    complete(rec);
    const fields: Record<string, string[]> = {};
    let file: File | undefined;
    for (const [name, value] of form.entries()) {
      if (typeof value === "string") fields[name] = [...(fields[name] ?? []), value];
      else if (name === "file") file = value;
    }
    rec.fields = fields;
    if (!file) return apiError(res, 400, "Missing required parameter: 'file'.", "file");
    const bytes = new Uint8Array(await file.arrayBuffer());
    rec.file = { name: file.name, type: file.type, bytes };
    if (!fields.model?.[0]) return apiError(res, 400, "Missing required parameter: 'model'.", "model");
    const format = (fields.response_format?.[0] ?? "json") as TranscriptionFormat;
    if (!(TRANSCRIPTION_FORMATS as readonly string[]).includes(format)) {
      return apiError(res, 400, `Invalid value for 'response_format': ${format}`, "response_format");
    }
    const granularities = fields["timestamp_granularities[]"] ?? [];
    if (granularities.some((g) => !(TIMESTAMP_GRANULARITIES as readonly string[]).includes(g))) {
      return apiError(res, 400, "Invalid value for 'timestamp_granularities[]'", "timestamp_granularities");
    }
    if (granularities.length > 0 && format !== "verbose_json") {
      return apiError(
        res,
        400,
        "timestamp_granularities[] is only supported with response_format verbose_json",
        "timestamp_granularities",
      );
    }
    let audio: { pcm: Int16Array; rate: number };
    try {
      audio = await decodeAudio(bytes);
    } catch (err) {
      return apiError(res, 400, `Invalid file format: ${(err as Error).message}`, "file");
    }
    const fault = up.faults.asr;
    if (fault && "hang" in fault) return;
    if (fault && "status" in fault) return apiError(res, fault.status, `scripted failure ${fault.status}`);
    if (fault && "malformed" in fault) {
      res.writeHead(200, { "content-type": "application/json" });
      return void res.end('{"txt": oops');
    }
    const text = (
      up.transcribe?.(audio) ??
      up.transcripts.shift() ??
      readToneCode(audio.pcm, audio.rate)
    ).trim();
    const duration = audio.pcm.length / audio.rate;
    // Word and segment times: the tone code's own (one block per character), spread over the audio.
    const charS = text.length > 0 ? Math.min(CHAR_MS / 1000, duration / text.length) : 0;
    const words: TranscriptionWord[] = [];
    for (const m of text.matchAll(/\S+/g)) {
      words.push({
        word: m[0].replace(/[.,!?;:]+$/, ""),
        start: m.index * charS,
        end: (m.index + m[0].length) * charS,
      });
    }
    const segments: TranscriptionSegment[] = [];
    for (const m of text.matchAll(/[^.!?]+[.!?]*/g)) {
      if (!m[0].trim()) continue;
      segments.push({
        id: segments.length,
        seek: 0,
        start: m.index * charS,
        end: (m.index + m[0].length) * charS,
        text: ` ${m[0].trim()}`,
        tokens: [],
        temperature: 0,
        avg_logprob: -0.2,
        compression_ratio: 1,
        no_speech_prob: 0.01,
      });
    }
    rec.answeredAt = performance.now();
    switch (format) {
      case "json":
        res.writeHead(200, { "content-type": "application/json" });
        return void res.end(JSON.stringify({ text }));
      case "text":
        res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
        return void res.end(`${text}\n`);
      case "verbose_json": {
        const v: TranscriptionVerbose = {
          task: "transcribe",
          language: fields.language?.[0] === "zh" ? "chinese" : "english",
          duration,
          text,
        };
        if (granularities.includes("word")) v.words = words;
        if (granularities.length === 0 || granularities.includes("segment")) v.segments = segments;
        res.writeHead(200, { "content-type": "application/json" });
        return void res.end(JSON.stringify(v));
      }
      case "srt":
      case "vtt": {
        const sep = format === "srt" ? "," : ".";
        const cues = segments.map(
          (s, i) =>
            `${format === "srt" ? `${i + 1}\n` : ""}${stamp(s.start * 1000, sep)} --> ${stamp(s.end * 1000, sep)}\n${s.text.trim()}\n`,
        );
        res.writeHead(200, { "content-type": format === "srt" ? "text/plain" : "text/vtt" });
        return void res.end(`${format === "vtt" ? "WEBVTT\n\n" : ""}${cues.join("\n")}`);
      }
    }
  }

  async function speech(req: IncomingMessage, res: ServerResponse, rec: RecordedRequest) {
    if (!(req.headers["content-type"] ?? "").startsWith("application/json")) {
      return apiError(res, 400, "Invalid Content-Type: expected application/json");
    }
    let b: SpeechRequestBody;
    try {
      b = JSON.parse((await body(req, rec)).toString()) as SpeechRequestBody;
    } catch {
      return apiError(res, 400, "We could not parse the JSON body of your request.");
    }
    rec.body = b;
    complete(rec);
    for (const k of ["model", "input", "voice"] as const) {
      if (typeof b[k] !== "string" || b[k] === "")
        return apiError(res, 400, `Missing required parameter: '${k}'.`, k);
    }
    if (b.input.length > 4096) return apiError(res, 400, "'input' is longer than 4096 characters", "input");
    const format = b.response_format ?? "mp3";
    if (!(SPEECH_FORMATS as readonly string[]).includes(format)) {
      return apiError(res, 400, `Invalid value for 'response_format': ${format}`, "response_format");
    }
    if (b.speed !== undefined && (typeof b.speed !== "number" || b.speed < 0.25 || b.speed > 4)) {
      return apiError(res, 400, "'speed' must be between 0.25 and 4.0", "speed");
    }
    if (up.holdSpeech) await up.holdSpeech;
    const fault = up.faults.tts;
    if (fault && "hang" in fault) return;
    if (fault && "status" in fault) return apiError(res, fault.status, `scripted failure ${fault.status}`);
    if (fault && "malformed" in fault) {
      res.writeHead(200, { "content-type": "application/json" });
      return void res.end(JSON.stringify({ detail: "not audio" }));
    }
    const pcm = toneCode(b.input);
    const bytes = new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength);
    res.writeHead(200, { "content-type": CONTENT_TYPES[format], "transfer-encoding": "chunked" });
    if (format === "pcm" || format === "wav") {
      if (format === "wav") res.write(wavHeader(SPEECH_PCM_RATE, 1, 16));
      const step = 2 * Math.round((SPEECH_PCM_RATE * CHAR_MS * CHARS_PER_CHUNK) / 1000);
      let chunks = 0;
      for (let at = 0; at < bytes.length; at += step) {
        if (fault && "breakAfterChunks" in fault && chunks++ >= fault.breakAfterChunks) {
          return void res.destroy();
        }
        const chunk = bytes.subarray(at, at + step);
        // Before a break, what was written must have left (else the break hides it).
        if (fault && "breakAfterChunks" in fault) await new Promise((r) => res.write(chunk, r));
        else res.write(chunk);
        rec.firstChunkAt ??= performance.now();
      }
    } else {
      const rest = FFMPEG_FORMATS[format];
      const args = ["-f", "s16le", "-ar", String(SPEECH_PCM_RATE), "-ac", "1", "-i", "pipe:0", ...rest];
      res.write(await ffmpeg([...args, "pipe:1"], bytes));
      rec.firstChunkAt ??= performance.now();
    }
    rec.answeredAt = performance.now();
    res.end();
  }

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0]!;
    const rec: RecordedRequest = { path, headers: req.headers, receivedAt: performance.now() };
    up.requests.push(rec);
    if (req.method !== "POST") return apiError(res, 405, `Method ${req.method} not allowed`);
    if (up.apiKey && req.headers.authorization !== `Bearer ${up.apiKey}`) {
      return apiError(res, 401, "Incorrect API key provided");
    }
    const handle =
      path === "/v1/audio/transcriptions" ? transcriptions : path === "/v1/audio/speech" ? speech : undefined;
    if (!handle) return apiError(res, 404, `Invalid URL (POST ${path})`);
    handle(req, res, rec).catch((err: Error) => {
      if (!res.headersSent) apiError(res, 500, err.message);
      else res.destroy();
    });
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  up.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  up.close = () =>
    new Promise<void>((r) => {
      for (const s of sockets) s.destroy();
      server.close(() => r());
    });
  return up;
}
