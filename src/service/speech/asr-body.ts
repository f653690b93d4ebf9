// An E6 request body read as it arrives. A client that sends its audio while it is captured
// streams the JSON body (chunked transfer) with `audio.data` last: everything before that string
// is known when its first Base64 characters arrive, so recognition can start on them and be nearly
// done when the body ends. The body is the contract's ordinary JSON, byte for byte; only the
// reading differs. The scanner follows JSON structure just enough to find `audio.data` at the top
// level's `audio` object; the rest of the text is kept and parsed whole at the end.
import type { Readable } from "node:stream";
import { badParam, tooLarge } from "../errors.ts";

export interface AsrBodyEnd {
  /** The whole body, parsed, with `audio.data` replaced by "" when it was streamed out. */
  body: unknown;
  /** The decoded audio bytes, when `audio.data` was streamed out. */
  audio?: Buffer;
}

type Frame = { kind: "object"; key: string | undefined; expectKey: boolean } | { kind: "array" };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Streams `audio.data` of an E6 body out as bytes while the body arrives. */
export class AsrBodyReader {
  /** Resolves with the body parsed up to `audio.data`'s value, or undefined if it never comes. */
  readonly head: Promise<unknown>;
  readonly done: Promise<AsrBodyEnd>;
  #resolveHead!: (head: unknown) => void;
  #sink: ((bytes: Buffer) => void) | undefined;
  readonly #audio: Buffer[] = [];
  #text: Buffer[] = [];
  #size = 0;
  // scanner state
  readonly #stack: Frame[] = [];
  #inString = false;
  #escaped = false;
  #stringStart = -1;
  #keyBytes: Buffer[] = [];
  #inData = false;
  #dataEscaped = false;
  #dataSeen = false;
  #b64 = "";
  #fail: ((err: unknown) => void) | undefined;

  /** `maxMs`: a body still arriving after this long is dropped (it holds a decoder meanwhile). */
  constructor(payload: Readable, limit: number, maxMs = 120_000) {
    this.head = new Promise((resolve) => {
      this.#resolveHead = resolve;
    });
    this.done = new Promise<AsrBodyEnd>((resolve, reject) => {
      // After a failure the rest of the body is read and dropped, so the 4xx answer gets through.
      let failed = false;
      const fail = (err: unknown) => {
        failed = true;
        reject(err);
      };
      this.#fail = fail;
      payload.on("data", (chunk: Buffer) => {
        if (failed) return;
        this.#size += chunk.length;
        if (this.#size > limit) {
          fail(tooLarge(`request body too large: more than ${limit} bytes`));
          return;
        }
        try {
          this.#scan(chunk);
        } catch (err) {
          fail(err);
        }
      });
      const timer = setTimeout(() => {
        payload.destroy();
        reject(
          badParam("body", `still arriving after ${maxMs / 1000} s: audio of one utterance is expected`),
        );
      }, maxMs);
      timer.unref();
      payload.on("error", reject);
      payload.on("end", () => {
        if (failed) return;
        try {
          resolve(this.#finish());
        } catch (err) {
          reject(err);
        }
      });
      payload.on("close", () => {
        clearTimeout(timer);
        reject(new Error("the request was closed before its body ended"));
      });
    });
    this.done.then(
      () => this.#resolveHead(undefined),
      () => this.#resolveHead(undefined),
    );
  }

  /**
   * The request is refused before its body is read (a fault played): the rest is read and dropped,
   * nothing kept, and `done` rejects with `err`.
   */
  drop(err: Error): void {
    this.#fail?.(err);
  }

  /** Where the audio bytes go; those already read are delivered at once. */
  onAudio(sink: (bytes: Buffer) => void): void {
    for (const b of this.#audio) sink(b);
    this.#sink = sink;
  }

  #scan(chunk: Buffer): void {
    let textFrom = 0;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (this.#inData) {
        if (this.#dataEscaped) {
          this.#dataEscaped = false;
          // Only the escapes Base64 text can carry: "\/" and escaped line breaks of wrapped Base64.
          if (c === 0x2f) this.#b64 += "/";
          else if (c !== 0x6e && c !== 0x72) throw badParam("audio.data", "is not Base64");
          textFrom = i + 1;
          continue;
        }
        if (c === BACKSLASH) {
          this.#emitBase64(chunk.toString("latin1", textFrom, i));
          this.#dataEscaped = true;
          textFrom = i + 1;
          continue;
        }
        if (c === QUOTE) {
          this.#emitBase64(chunk.toString("latin1", textFrom, i));
          this.#flushBase64(true);
          this.#inData = false;
          textFrom = i; // the closing quote goes back into the text: `"data":""`
        }
        continue;
      }
      if (this.#inString) {
        if (this.#escaped) this.#escaped = false;
        else if (c === BACKSLASH) this.#escaped = true;
        else if (c === QUOTE) {
          this.#inString = false;
          const top = this.#stack.at(-1);
          if (top?.kind === "object" && top.expectKey) {
            this.#keyBytes.push(chunk.subarray(Math.max(0, this.#stringStart), i));
            top.key = keyOf(this.#keyBytes);
          }
          this.#keyBytes = [];
        }
        continue;
      }
      const top = this.#stack.at(-1);
      if (c === QUOTE) {
        if (top?.kind === "object" && !top.expectKey && this.#atAudioData()) {
          // The value of audio.data begins: from here its characters are audio, not text.
          this.#text.push(chunk.subarray(textFrom, i + 1));
          textFrom = i + 1;
          this.#inData = true;
          this.#dataSeen = true;
          this.#resolveHead(this.#parseHead());
          continue;
        }
        this.#inString = true;
        this.#stringStart = i + 1;
      } else if (c === 0x7b) this.#stack.push({ kind: "object", key: undefined, expectKey: true });
      else if (c === 0x5b) this.#stack.push({ kind: "array" });
      else if (c === 0x7d || c === 0x5d) this.#stack.pop();
      else if (c === 0x3a && top?.kind === "object") top.expectKey = false;
      else if (c === 0x2c && top?.kind === "object") {
        top.expectKey = true;
        top.key = undefined;
      }
    }
    if (this.#inString) {
      // A key split across chunks: keep its first part (other strings are not needed here).
      const top = this.#stack.at(-1);
      if (top?.kind === "object" && top.expectKey) {
        this.#keyBytes.push(chunk.subarray(Math.max(0, this.#stringStart)));
      }
      this.#stringStart = 0;
    }
    if (this.#inData) this.#emitBase64(chunk.toString("latin1", textFrom));
    else this.#text.push(chunk.subarray(textFrom));
  }

  #atAudioData(): boolean {
    const s = this.#stack;
    if (this.#dataSeen || s.length !== 2) return false;
    const root = s[0]!;
    const audio = s[1]!;
    return root.kind === "object" && root.key === "audio" && audio.kind === "object" && audio.key === "data";
  }

  /** The text so far closed as if audio.data were "" and the body ended there. */
  #parseHead(): unknown {
    try {
      return JSON.parse(`${Buffer.concat(this.#text).toString("utf8")}"}}`);
    } catch {
      return undefined; // a malformed head: the whole body's parse reports it
    }
  }

  #emitBase64(text: string): void {
    if (!text) return;
    this.#b64 += text.replace(/\s+/g, "");
    this.#flushBase64(false);
  }

  /** Decodes whole 4-character groups (all that is left at the end). */
  #flushBase64(last: boolean): void {
    const n = last ? this.#b64.length : this.#b64.length - (this.#b64.length % 4);
    if (n === 0) return;
    const part = this.#b64.slice(0, n);
    this.#b64 = this.#b64.slice(n);
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(part)) throw badParam("audio.data", "is not Base64");
    const bytes = Buffer.from(part, "base64");
    this.#audio.push(bytes);
    this.#sink?.(bytes);
  }

  #finish(): AsrBodyEnd {
    if (this.#inData || this.#inString) throw badParam("body", "is not valid JSON: it ends inside a string");
    const text = Buffer.concat(this.#text).toString("utf8");
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (err) {
      throw badParam("body", `is not valid JSON: ${(err as Error).message}`, "invalid_json");
    }
    return this.#dataSeen ? { body, audio: Buffer.concat(this.#audio) } : { body };
  }
}

function keyOf(parts: Buffer[]): string | undefined {
  try {
    return JSON.parse(`"${Buffer.concat(parts).toString("utf8")}"`) as string;
  } catch {
    return undefined;
  }
}
