// What the caller hears while a late answer is on its way: when the reply's first audio has not
// come `afterMs` after the end of the caller's turn, a short cue the agent names ("Mm-hm.", "One
// moment.") plays from audio kept ready since call start, so the line is never dead. It is not an
// answer: it is never spoken over the caller (nobody may be speaking, and a caller who starts is
// not made to talk over it: it is cleared), it plays at most once per turn, and the reply follows
// it as soon as its own audio comes.
import type { Clock, TimerHandle } from "../core/clock.ts";
import { audioMs } from "./agent-audio.ts";
import type { AgentTurn } from "./agent-turn.ts";
import { CachedSpeech } from "./cached-speech.ts";
import type { CallTransport } from "./transport.ts";

export interface WaitingCueConfig {
  /** The words, synthesized once per call. */
  text: string;
  /** Waited after the end of the caller's speech before the cue plays, ms. */
  afterMs: number;
}

export interface WaitingCueHost {
  /** Someone is speaking, or may be starting to: no cue now. */
  busy(): boolean;
  /** The cue played (for the call's record). */
  played(text: string): void;
}

export class WaitingCue {
  readonly #cfg: WaitingCueConfig;
  readonly #speech: CachedSpeech;
  readonly #clock: Clock;
  readonly #transport: CallTransport;
  readonly #host: WaitingCueHost;
  #timer: TimerHandle | undefined;
  /** The turn the cue played for, and until when it plays (clock time). */
  #playing: { turn: AgentTurn; untilAt: number } | undefined;

  constructor(
    cfg: WaitingCueConfig,
    speech: CachedSpeech,
    deps: { clock: Clock; transport: CallTransport; host: WaitingCueHost },
  ) {
    this.#cfg = cfg;
    this.#speech = speech;
    this.#clock = deps.clock;
    this.#transport = deps.transport;
    this.#host = deps.host;
  }

  /** `turn` answers a caller whose speech ended at clock time `speechEndAt`: cue it if it is late. */
  arm(turn: AgentTurn, speechEndAt: number): void {
    this.cancel();
    if (turn.timings.firstPlayAt !== undefined) return;
    const wait = Math.max(0, speechEndAt + this.#cfg.afterMs - this.#clock.now());
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = undefined;
      this.#fire(turn);
    }, wait);
  }

  /** The caller began to speak: a cue still playing alone stops now; none is pending any more. */
  callerSpoke(): void {
    this.cancel();
    const playing = this.#playing;
    this.#playing = undefined;
    if (!playing || this.#clock.now() >= playing.untilAt) return;
    // Only the cue is queued while its turn has played nothing; once the reply plays, the
    // barge-in rules own the transport's queue.
    if (playing.turn.timings.firstPlayAt === undefined) this.#transport.clear();
  }

  cancel(): void {
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #fire(turn: AgentTurn): void {
    const audio = this.#speech.audio;
    if (!audio || turn.timings.firstPlayAt !== undefined || !turn.speaking || this.#host.busy()) return;
    this.#transport.play(audio);
    this.#playing = { turn, untilAt: this.#clock.now() + audioMs(audio, this.#transport.output) };
    this.#host.played(this.#speech.text);
  }
}

/** The call's waiting cue and the words it keeps ready, when the agent has one. */
export function waitingCueOf(
  cfg: WaitingCueConfig | undefined,
  clock: Clock,
  transport: CallTransport,
  host: WaitingCueHost,
): { speech: CachedSpeech; cue: WaitingCue } | undefined {
  if (!cfg) return undefined;
  const speech = new CachedSpeech(cfg.text, transport.output);
  return { speech, cue: new WaitingCue(cfg, speech, { clock, transport, host }) };
}
