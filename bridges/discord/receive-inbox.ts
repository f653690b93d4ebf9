// Members' packets wait for the next tick of the shared 20 ms voice clock, and every channel's are
// then decoded and handed to the session together, instead of one by one as each datagram wakes
// the event loop. The VAD's windows of all speakers then complete in the same turn of the loop and
// leave for its worker in one batch (codecs/silero.ts gathers what comes within 8 ms): one trip
// there and back per tick, not one per speaker whose packet happened to land outside the others'
// gather. Silero's batching is untouched (a phone call's frames come as they did). A packet waits
// at most one tick (20 ms, 10 on average) before it is decoded; nothing is dropped or reordered.
import type { MemberReceiver } from "./member-receiver.ts";
import { sharedVoiceClock, type VoiceClock, type VoiceTicker } from "./voice-clock.ts";

export class ReceiveInbox implements VoiceTicker {
  readonly #ticks: VoiceClock;
  // Two parallel lists reused from tick to tick: no object per packet.
  #receivers: MemberReceiver[] = [];
  #packets: Buffer[] = [];
  #spare: { receivers: MemberReceiver[]; packets: Buffer[] } = { receivers: [], packets: [] };
  #closed = false;

  constructor(ticks: VoiceClock = sharedVoiceClock) {
    this.#ticks = ticks;
  }

  /** Packets waiting for the next tick. */
  get pending(): number {
    return this.#packets.length;
  }

  /** `packet` (a member's decrypted Opus) is decoded by `receiver` at the next tick. */
  push(receiver: MemberReceiver, packet: Buffer): void {
    if (this.#closed) return;
    this.#receivers.push(receiver);
    this.#packets.push(packet);
    if (this.#packets.length === 1) this.#ticks.add(this);
  }

  /** Decodes and delivers everything waiting now, in arrival order (a member leaving, a tick). */
  flush(): void {
    const receivers = this.#receivers;
    const packets = this.#packets;
    if (packets.length === 0) return;
    // Swapped out first: what a delivery causes to arrive goes to the next flush.
    this.#receivers = this.#spare.receivers;
    this.#packets = this.#spare.packets;
    try {
      for (let i = 0; i < packets.length; i++) receivers[i]!.push(packets[i]!);
    } finally {
      receivers.length = 0;
      packets.length = 0;
      this.#spare = { receivers, packets };
    }
  }

  /** @internal One step of the voice clock; false once nothing waits (the next packet re-adds it). */
  tick(): boolean {
    this.flush();
    return false;
  }

  /** The conversation ended: what waits is dropped, nothing more is taken. */
  close(): void {
    this.#closed = true;
    this.#receivers.length = 0;
    this.#packets.length = 0;
    this.#ticks.remove(this);
  }
}
