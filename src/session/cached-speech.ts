// Words the agent may have to say at once, synthesized at call start: the apology when a turn
// fails (it must play even when TTS itself is what failed), and the waiting cue (a late answer
// must not wait for its own stand-in).
import type { Logger } from "../core/log.ts";
import { audioMs, concatAudio } from "./agent-audio.ts";
import type { SpeechSynthesizer } from "./services.ts";
import type { AgentAudio, OutputFormat } from "./transport.ts";

const letters = (s: string) => s.match(/[\p{L}\p{N}]/gu)?.length ?? 0;

/** Sessions tried for the words before the call goes without them. */
const PREPARE_ATTEMPTS = 3;

export class CachedSpeech {
  readonly text: string;
  #audio: AgentAudio | undefined;
  readonly #format: OutputFormat;

  constructor(text: string, format: OutputFormat) {
    this.text = text;
    this.#format = format;
  }

  /** The audio, once ready and not empty. */
  get audio(): AgentAudio | undefined {
    return this.#audio && audioMs(this.#audio, this.#format) > 0 ? this.#audio : undefined;
  }

  /**
   * Synthesizes the words, tried a few times: a session the service drops before the words are
   * whole would leave the call without them (and the apology is what a failing service needs).
   */
  async prepare(tts: SpeechSynthesizer, log: Logger): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        this.#audio = await this.#synthesize(tts);
        return;
      } catch (err) {
        if (attempt >= PREPARE_ATTEMPTS) {
          log.warn(
            { err: (err as Error).message, text: this.text },
            "could not pre-synthesize words kept ready",
          );
          return;
        }
      }
    }
  }

  async #synthesize(tts: SpeechSynthesizer): Promise<AgentAudio> {
    const stream = await tts.open(this.#format);
    try {
      stream.sendText(this.text);
      stream.flush();
      const chunks: AgentAudio[] = [];
      // Words of several sentences come as several (the first as soon as it is complete, the rest
      // after the flush): done when every letter sent was in a sentence that ended.
      const want = letters(this.text);
      let spoken = 0;
      let open = 0;
      for await (const ev of stream.events) {
        if (ev.type === "audio") chunks.push(ev.audio);
        if (ev.type === "sentence-start") open += 1;
        if (ev.type === "sentence-end") {
          open -= 1;
          spoken += letters(ev.text);
        }
        if (open === 0 && spoken >= want && chunks.length) return concatAudio(chunks, this.#format);
      }
      throw new Error("the TTS session ended before the words were whole");
    } finally {
      stream.close();
    }
  }
}
