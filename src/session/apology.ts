// The apology: what the caller hears when their turn could not be answered (recognition failed
// twice, or the reply failed). It is said from audio synthesized at call start (TTS may be what
// failed), as an agent turn of its own, so a barge-in stops it like any reply; at most once for
// one caller turn; and never over the caller: due while someone speaks or is starting to, or while
// their next turn is on its way, it waits for the silence, and is dropped if that next turn is
// answered (the caller has moved on). When nothing failed on our side but no words were made out
// in the caller's own voice (a noisy line), they are asked to say it again in words that say so
// (askAgainText, synthesized then), at most ASK_AGAIN_MAX times before words of theirs are answered:
// a room's voice taken for theirs is not asked about again and again.
import type { Clock, TimerHandle } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import { audioMs } from "./agent-audio.ts";
import type { CachedSpeech } from "./cached-speech.ts";
import type { TtsEvent, TtsStream } from "./services.ts";
import type { AgentAudio, OutputFormat } from "./transport.ts";

export interface ApologyHost {
  /** Nobody speaks or is starting to, no caller turn is on its way, and the agent is silent. */
  quiet(): boolean;
  /** Says the words now: an agent turn whose speech comes from `openTts` (else the call's TTS). */
  say(text: string, openTts: (() => Promise<TtsStream>) | undefined, why: string): void;
}

/** How often an apology held for the caller's silence looks again, ms. */
const RECHECK_MS = 20;

/** Why a turn is asked again: their voice, and no words made out in it. */
export const UNHEARD = "no words made out in the caller's voice";

/** Times in a row the caller is asked again before the agent waits for them instead (see above). */
export const ASK_AGAIN_MAX = 2;

export class Apology<Turn extends object> {
  speech: CachedSpeech;
  readonly #format: OutputFormat;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #host: ApologyHost;
  /** The words that ask the caller again (the agent's, which a handoff changes). */
  readonly #askAgainText: () => string;
  #pending: string | undefined;
  /** Times asked again since words of the caller's were last answered. */
  #askedAgain = 0;
  #timer: TimerHandle | undefined;
  /** The caller turn last apologized for: never twice for one. */
  #lastFor: Turn | undefined;

  constructor(
    speech: CachedSpeech,
    deps: { format: OutputFormat; clock: Clock; log: Logger; host: ApologyHost; askAgainText: () => string },
  ) {
    this.speech = speech;
    this.#askAgainText = deps.askAgainText;
    this.#format = deps.format;
    this.#clock = deps.clock;
    this.#log = deps.log;
    this.#host = deps.host;
  }

  /** An apology is waiting for the caller's silence. */
  get pending(): boolean {
    return this.#pending !== undefined;
  }

  /**
   * `turn` (the caller's, if the failure answered one) failed for `why`: the apology is said, at
   * once or at the next silence; for UNHEARD, the caller is asked again instead (see above). False
   * when it will not be (said already for that turn, no audio for it, or asked again enough).
   */
  due(turn: Turn | undefined, why: string): boolean {
    if (turn !== undefined && turn === this.#lastFor) return false;
    if (why !== UNHEARD && !this.speech.audio) {
      this.#log.error("no apology audio available (TTS never worked on this call)");
      return false;
    }
    if (why === UNHEARD) {
      if (this.#askedAgain >= ASK_AGAIN_MAX) {
        this.#log.info(`${UNHEARD}, asked again ${ASK_AGAIN_MAX} times in a row: waiting for them instead`);
        return false;
      }
      this.#log.info(`${UNHEARD}: asking them to say it again`);
      this.#askedAgain++;
    }
    if (turn !== undefined) this.#lastFor = turn;
    this.#pending = why;
    this.#clock.clearTimeout(this.#timer);
    this.#try();
    return true;
  }

  /** The caller's next turn is being answered: an apology still waiting is moot. */
  drop(): void {
    this.#askedAgain = 0;
    this.#pending = undefined;
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #try(): void {
    this.#timer = undefined;
    const why = this.#pending;
    const audio = this.speech.audio;
    if (why === undefined || (why !== UNHEARD && !audio)) return;
    if (!this.#host.quiet()) {
      this.#timer = this.#clock.setTimeout(() => this.#try(), RECHECK_MS);
      return;
    }
    this.#pending = undefined;
    const { text } = this.speech;
    if (why === UNHEARD) this.#host.say(this.#askAgainText(), undefined, why);
    else if (audio) this.#host.say(text, async () => cachedStream(text, audio, this.#format), why);
  }
}

/** A TTS session that speaks words already synthesized: their audio as one sentence, at once. */
function cachedStream(text: string, audio: AgentAudio, format: OutputFormat): TtsStream {
  let closed = false;
  let onClose: () => void = () => {};
  const over = new Promise<void>((resolve) => {
    onClose = resolve;
  });
  return {
    get closed() {
      return closed;
    },
    sendText() {},
    flush() {},
    close() {
      closed = true;
      onClose();
    },
    events: {
      async *[Symbol.asyncIterator](): AsyncGenerator<TtsEvent> {
        yield { type: "sentence-start", text };
        yield { type: "audio", audio, durationMs: audioMs(audio, format) };
        yield { type: "sentence-end", text };
        yield { type: "flushed" };
        // A session that ends before its turn does is one cut mid-reply: this one ends with it.
        await over;
      },
    },
  };
}
