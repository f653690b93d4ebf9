// Words the agent may have to say at once, synthesized at call start: the apology when a turn
// fails (it must play even when TTS itself is what failed), and the waiting cue (a late answer
// must not wait for its own stand-in).
import type { Logger } from "../core/log.ts";
import { audioMs, concatAudio } from "./agent-audio.ts";
import type { SpeechSynthesizer, TtsStream } from "./services.ts";
import type { AgentAudio, OutputFormat } from "./transport.ts";

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

  async prepare(tts: SpeechSynthesizer, log: Logger): Promise<void> {
    let stream: TtsStream | undefined;
    try {
      stream = await tts.open(this.#format);
      stream.sendText(this.text);
      stream.flush();
      const chunks: AgentAudio[] = [];
      let open = 0;
      let seenSentence = false;
      for await (const ev of stream.events) {
        if (ev.type === "audio") chunks.push(ev.audio);
        if (ev.type === "sentence-start") {
          open += 1;
          seenSentence = true;
        }
        if (ev.type === "sentence-end") open -= 1;
        if (seenSentence && open === 0 && chunks.length) break;
      }
      this.#audio = concatAudio(chunks, this.#format);
    } catch (err) {
      log.warn({ err: (err as Error).message, text: this.text }, "could not pre-synthesize words kept ready");
    } finally {
      stream?.close();
    }
  }
}
