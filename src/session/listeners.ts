// Everyone the session listens to: the lone caller of a phone call, or each member of a voice
// channel, made on their first frame. Routing a frame is the hot path (every 20 ms of every
// call), so the lone caller skips the lookup.
import type { CallLevels } from "../records/call-record.ts";
import type { SpeakerListener } from "./speaker-listener.ts";
import type { Speaker } from "./transport.ts";

export class Listeners {
  readonly #create: (speaker: Speaker | undefined) => SpeakerListener;
  readonly #onNewSpeaker: (speaker: Speaker) => void;
  #solo: SpeakerListener | undefined;
  readonly #speakers = new Map<string, SpeakerListener>();

  constructor(create: (speaker: Speaker | undefined) => SpeakerListener, onNewSpeaker: (s: Speaker) => void) {
    this.#create = create;
    this.#onNewSpeaker = onNewSpeaker;
  }

  /** One frame of `speaker` (undefined on a phone call) to their listener. */
  push(frame: Int16Array, speaker: Speaker | undefined): void {
    if (speaker) {
      this.#speakerListener(speaker).push(frame);
      return;
    }
    this.#solo ??= this.#create(undefined);
    this.#solo.push(frame);
  }

  /** A member's listener, if they have spoken. */
  member(id: string): SpeakerListener | undefined {
    return this.#speakers.get(id);
  }

  /** Forgets a member (who left); closing their listener is the caller's business. */
  remove(id: string): void {
    this.#speakers.delete(id);
  }

  all(): SpeakerListener[] {
    return this.#solo ? [this.#solo, ...this.#speakers.values()] : [...this.#speakers.values()];
  }

  anyoneSpeaking(): boolean {
    return this.all().some((l) => l.speaking);
  }

  speaking(): SpeakerListener[] {
    return this.all().filter((l) => l.speaking);
  }

  /**
   * Someone may be starting to speak: sound the VAD has not yet called speech. On this frame, not
   * until the onset has been gone ONSET_GONE_MS as a paused answer waits (onset-pause.ts): holding
   * the end of a turn that long held 17 of 95 turns over a keyboard's clicks (7 before), eou p50
   * 866 → 905, and no answer was begun over a caller the less.
   */
  anyOnsetPending(): boolean {
    return this.all().some((l) => l.onsetPending());
  }

  /** Closes every listener; returns the lone caller's levels over the call (a phone call's). */
  closeAll(): CallLevels | undefined {
    for (const l of this.all()) l.close();
    return this.#solo?.levels();
  }

  #speakerListener(speaker: Speaker): SpeakerListener {
    let l = this.#speakers.get(speaker.id);
    if (!l) {
      l = this.#create(speaker);
      this.#speakers.set(speaker.id, l);
      this.#onNewSpeaker(speaker);
    }
    return l;
  }
}
