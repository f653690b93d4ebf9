// Keeps one realtime TTS session connected and created ahead of need, so a turn never
// waits for the WebSocket handshake; a spare that the server closed (60 s idle) is
// replaced on the next take.
import type { Logger } from "../core/log.ts";
import type { SpeechSynthesizer, TtsStream } from "./services.ts";
import type { OutputFormat } from "./transport.ts";

export class TtsPool {
  readonly #synth: SpeechSynthesizer;
  readonly #format: OutputFormat;
  readonly #log: Logger;
  #spare: Promise<TtsStream> | undefined;
  #closed = false;

  constructor(synth: SpeechSynthesizer, format: OutputFormat, log: Logger) {
    this.#synth = synth;
    this.#format = format;
    this.#log = log;
  }

  /** Opens the spare now (e.g. while the caller speaks). */
  warm(): void {
    if (this.#closed || this.#spare) return;
    const spare = this.#synth.open(this.#format);
    spare.catch((err: Error) => {
      this.#log.warn({ err: err.message }, "could not open a spare TTS session");
      if (this.#spare === spare) this.#spare = undefined;
    });
    this.#spare = spare;
  }

  /** A ready session for one turn; the next spare starts opening at once. */
  async take(): Promise<TtsStream> {
    if (this.#closed) throw new Error("call ended");
    const spare = this.#spare;
    this.#spare = undefined;
    let stream: TtsStream | undefined;
    if (spare) {
      try {
        stream = await spare;
        if (stream.closed) stream = undefined;
      } catch {
        stream = undefined;
      }
    }
    stream ??= await this.#synth.open(this.#format);
    this.warm();
    return stream;
  }

  close(): void {
    this.#closed = true;
    const spare = this.#spare;
    this.#spare = undefined;
    spare?.then((s) => s.close()).catch(() => undefined);
  }
}
