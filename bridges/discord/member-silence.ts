// Discord relays a member's voice only while they speak: after five frames of silence it sends
// nothing at all. The VAD has to hear silence to end a turn (Silero's probability falls over
// 100–150 ms, then 160 ms of quiet), so a member who goes quiet is heard as silence, frame by
// frame on the clock, until any turn of theirs must have ended; then nothing is fed, as nothing
// is sent. Late packets of theirs get `slackMs` before silence stands in for them. It steps on the
// shared 20 ms voice clock, with every channel's output, rather than a timer of its own.
import type { Clock } from "../../src/core/clock.ts";
import type { Speaker } from "../transport.ts";
import { sharedVoiceClock, type VoiceClock, type VoiceTicker } from "./voice-clock.ts";

const FRAME_MS = 20;

interface Quiet {
  speaker: Speaker;
  lastHeardAt: number;
  /** Clock time the member's next frame is due. */
  nextAt: number;
}

export interface MemberSilenceOptions {
  clock: Clock;
  /** What steps it every 20 ms (default: the process's shared voice clock). */
  ticks?: VoiceClock;
  /** Samples in a 20 ms frame at the transport's rate. */
  frameSamples: number;
  onFrame(frame: Int16Array, speaker: Speaker): void;
  /** Silence fed after a member's last packet, ms (default 2000: past the longest end of turn). */
  fillMs?: number;
  /** How late a packet may be before silence stands in for it, ms (default 60). */
  slackMs?: number;
}

export class MemberSilence implements VoiceTicker {
  readonly #o: Required<Omit<MemberSilenceOptions, "onFrame" | "clock" | "ticks">> & MemberSilenceOptions;
  readonly #ticks: VoiceClock;
  readonly #silence: Int16Array;
  readonly #members = new Map<string, Quiet>();
  /** Silence frames fed, in all. */
  filled = 0;

  constructor(opts: MemberSilenceOptions) {
    this.#o = { fillMs: 2000, slackMs: 60, ...opts };
    this.#ticks = opts.ticks ?? sharedVoiceClock;
    this.#silence = new Int16Array(opts.frameSamples);
  }

  /** A real frame of `speaker` was delivered now. */
  heard(speaker: Speaker): void {
    const now = this.#o.clock.now();
    let m = this.#members.get(speaker.id);
    if (!m) {
      m = { speaker, lastHeardAt: now, nextAt: now + FRAME_MS };
      this.#members.set(speaker.id, m);
    }
    m.speaker = speaker;
    m.lastHeardAt = now;
    m.nextAt = now + FRAME_MS;
    this.#ticks.add(this);
  }

  /** The member left: nothing more is fed for them. */
  forget(speakerId: string): void {
    this.#members.delete(speakerId);
  }

  close(): void {
    this.#members.clear();
    this.#ticks.remove(this);
  }

  /** @internal One step of the voice clock; false once no member needs silence. */
  tick(): boolean {
    const now = this.#o.clock.now();
    for (const [id, m] of this.#members) {
      // Every frame due more than `slackMs` ago that no packet filled is silence.
      while (m.nextAt + this.#o.slackMs <= now && m.nextAt - m.lastHeardAt < this.#o.fillMs) {
        this.filled++;
        this.#o.onFrame(this.#silence, m.speaker);
        m.nextAt += FRAME_MS;
      }
      if (m.nextAt - m.lastHeardAt >= this.#o.fillMs) this.#members.delete(id);
    }
    return this.#members.size > 0;
  }
}
