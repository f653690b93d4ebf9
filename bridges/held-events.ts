// What a transport hears before the session attaches (the session starts a few ms after the
// call does): held, then delivered in order on attach. Audio is bounded (the oldest frames go
// first), other events are always kept. Frames are delivered as they come once attached, and
// copied only while held, since transports reuse their frame buffers.
import type { TransportListener } from "./transport.ts";

/** Audio frames held at most: 1 s of 20 ms frames. */
const HELD_FRAMES = 50;

export class HeldEvents {
  readonly #owner: string;
  #listener: TransportListener | undefined;
  #held: Array<{ audio: boolean; deliver: (l: TransportListener) => void }> = [];
  #heldAudio = 0;

  /** `owner` names the transport in the error for a second attach. */
  constructor(owner: string) {
    this.#owner = owner;
  }

  get listener(): TransportListener | undefined {
    return this.#listener;
  }

  attach(listener: TransportListener): void {
    if (this.#listener) throw new Error(`${this.#owner}: attach() called twice`);
    this.#listener = listener;
    const held = this.#held;
    this.#held = [];
    this.#heldAudio = 0;
    for (const e of held) e.deliver(listener);
  }

  /** One inbound frame (a buffer the caller reuses). */
  audio(frame: Int16Array): void {
    const l = this.#listener;
    if (l) {
      l.audio(frame);
      return;
    }
    if (this.#heldAudio >= HELD_FRAMES) {
      this.#held.splice(
        this.#held.findIndex((e) => e.audio),
        1,
      );
      this.#heldAudio--;
    }
    const copy = frame.slice();
    this.#held.push({ audio: true, deliver: (x) => x.audio(copy) });
    this.#heldAudio++;
  }

  /** Any other event: now, or once attached. */
  deliver(event: (l: TransportListener) => void): void {
    if (this.#listener) event(this.#listener);
    else this.#held.push({ audio: false, deliver: event });
  }
}
