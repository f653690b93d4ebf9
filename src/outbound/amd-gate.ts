// Answering-machine detection from outside the session: the answered call's transport is wrapped
// at once, its audio goes to the detector (the session does not exist yet, so the agent is
// silent), and the gate says what was decided. A person: the session is started on the gate,
// which from then on passes everything through (the "Hello?" already heard is not replayed). A
// machine: the gate says when the message may start (the cue: the beep's end, or silence);
// answered-call.ts plays it through the transport and hangs up. `synthesize` makes that message.
import { PassThroughTransport } from "../session/pass-through-transport.ts";
import type { SpeechSynthesizer } from "../session/services.ts";
import type { AgentAudio, CallTransport, TransportListener } from "../session/transport.ts";
import { type AmdEvent, AnsweringMachineDetector } from "./amd.ts";

export interface GateEvents {
  /** The detector's verdict (once); a key press before it says a person. */
  decided(result: "human" | "machine", atMs: number, why: string): void;
  /** A machine's greeting is over: the message may start (`beepEndMs` when it beeped). */
  cue(atMs: number, beepEndMs: number | undefined, why: string): void;
  /** The far end hung up before the session took over. */
  ended(reason: string): void;
}

/** No frame for this long counts as silence, ms (RTP jitter stays well below it). */
const GAP_MS = 200;

export class AmdGate extends PassThroughTransport {
  readonly #detector: AnsweringMachineDetector;
  readonly #events: GateEvents;
  #listener: TransportListener | undefined;
  #msSinceAnswer = 0;

  readonly #detect: boolean;
  /** Time passing without frames (a callee that suppresses silence) is silence to the detector. */
  #gapTimer: NodeJS.Timeout | undefined;
  #lastFrameAt = performance.now();
  /** A tick saw the gap; the next one counts it if still no frame came (see the timer). */
  #gapSeen = false;

  /**
   * `detect` false: the carrier decides (Twilio's AMD); audio waits unheard until it has.
   * `detector`: one that already heard the call's early media (its evidence carries over).
   */
  constructor(
    inner: CallTransport,
    events: GateEvents,
    detect = true,
    detector: AnsweringMachineDetector = new AnsweringMachineDetector(inner.inputRate),
  ) {
    super(inner);
    this.#detect = detect;
    this.#events = events;
    this.#detector = detector;
    inner.attach({
      audio: (frame, speaker) => {
        if (this.#listener) {
          this.#listener.audio(frame, speaker);
          return;
        }
        const ms = (frame.length / inner.inputRate) * 1000;
        this.#msSinceAnswer += ms;
        this.#lastFrameAt = performance.now();
        if (this.#detect) this.#handle(this.#detector.push(frame, ms));
      },
      dtmf: (digit) => {
        if (this.#listener) this.#listener.dtmf(digit);
        else if (!this.#detector.decided) {
          // Only a person presses keys this early.
          this.#decide("human", `a key press (${digit})`);
        }
      },
      played: (ms) => this.#listener?.played(ms),
      ended: (reason) => {
        this.#stopGaps();
        if (this.#listener) this.#listener.ended(reason);
        else this.#events.ended(reason);
      },
    });
    if (detect)
      this.#gapTimer = setInterval(() => {
        const now = performance.now();
        const gap = now - this.#lastFrameAt;
        if (gap < GAP_MS) {
          this.#gapSeen = false;
          return;
        }
        // After the event loop stalled, this runs before the frames that came meanwhile are read:
        // counted at once, the stall was silence, and then its frames' time again (a voicemail's
        // greeting ended early and the message began over it). A gap is counted a tick later,
        // once no frame has come after all.
        if (!this.#gapSeen) {
          this.#gapSeen = true;
          return;
        }
        this.#gapSeen = false;
        this.#lastFrameAt = now;
        this.#msSinceAnswer += gap;
        this.#handle(this.#detector.silence(gap));
      }, GAP_MS / 2).unref();
  }

  #stopGaps(): void {
    clearInterval(this.#gapTimer);
    this.#gapTimer = undefined;
  }

  /** Time since the answer, on the audio's own timeline, ms. */
  get elapsedMs(): number {
    return this.#msSinceAnswer;
  }

  /** The session attaches once a person was heard: everything passes through from now on. */
  override attach(listener: TransportListener): void {
    this.#stopGaps();
    this.#listener = listener;
  }

  #decided = false;

  /** The carrier's verdict (Twilio's AnsweredBy). */
  carrierDecided(result: "human" | "machine", why: string): void {
    this.#decide(result, why);
  }

  /** The carrier says the machine's greeting has ended (DetectMessageEnd): the message may start. */
  carrierCue(why: string, beep: boolean): void {
    this.#events.cue(this.#msSinceAnswer, beep ? this.#msSinceAnswer : undefined, why);
  }

  #decide(result: "human" | "machine", why: string): void {
    if (this.#decided) return;
    this.#decided = true;
    this.#events.decided(result, this.#msSinceAnswer, why);
  }

  #handle(events: AmdEvent[]): void {
    for (const e of events) {
      if (e.kind === "decided") this.#decide(e.result, e.why);
      else {
        this.#stopGaps();
        this.#events.cue(e.atMs, e.beep?.endMs, e.why);
      }
    }
  }
}

/** After the flush, no sentence open and nothing more for this long: the message is whole, ms. */
const SETTLED_MS = 400;

/** Synthesizes `text` in the transport's format now (while the machine's greeting plays). */
export async function synthesize(tts: SpeechSynthesizer, transport: CallTransport, text: string) {
  const stream = await tts.open(transport.output);
  stream.sendText(text);
  stream.flush();
  const audio: AgentAudio[] = [];
  const events = stream.events[Symbol.asyncIterator]();
  let open = 0;
  let flushed = false;
  let spoken = false;
  try {
    for (;;) {
      // `flushed` acknowledges the flush; sentences (and their audio) may still follow it.
      const settled = flushed && spoken && open === 0;
      let timer: NodeJS.Timeout | undefined;
      const next = await Promise.race([
        events.next(),
        ...(settled
          ? [new Promise<"settled">((r) => (timer = setTimeout(() => r("settled"), SETTLED_MS)))]
          : []),
      ]);
      clearTimeout(timer);
      if (next === "settled" || next.done) break;
      const e = next.value;
      if (e.type === "audio") audio.push(e.audio);
      else if (e.type === "sentence-start") {
        open++;
        spoken = true;
      } else if (e.type === "sentence-end") open--;
      else if (e.type === "flushed") flushed = true;
    }
  } finally {
    stream.close();
  }
  return audio;
}
