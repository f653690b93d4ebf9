// The agent's voice into a Discord voice channel, as the TTS made it: Opus packets queued and sent
// one per 20 ms tick of the shared voice clock, straight out of the voice connection (packet-out.ts:
// DAVE and transport encryption as @discordjs/voice does them), with no AudioPlayer, resource or
// stream per stretch. After a stretch come the 5 silence frames Discord expects, then "not
// speaking"; clear() stops at once (no trailing silence, what barge-in wants).
//
// Nothing goes out while the outlet is closed (the DAVE group is not ready, or the connection is
// reconnecting): the packets wait, and playout (what the members heard) does not advance.
import { Buffer } from "node:buffer";
import { OPUS_PACKET_MS } from "../transport.ts";
import { sharedVoiceClock, type VoiceClock, type VoiceTicker } from "./voice-clock.ts";

/** The Opus frame of silence Discord clients send after speech. */
export const SILENCE_FRAME = Buffer.from([0xf8, 0xff, 0xfe]);
const SILENCE_FRAMES_AFTER_SPEECH = 5;

/** Where packets go: a voice connection, or nothing at all (packets consumed unheard, in tests). */
export interface PacketOutlet {
  /** Whether a packet sent now leaves as the members expect it (encrypted, connection ready). */
  open(): boolean;
  send(packet: Buffer): void;
  speaking(on: boolean): void;
}

export interface OpusSenderOptions {
  /** Called each time a packet went out, with the cumulative played ms. */
  onPlayed?(playedMs: number): void;
  clock?: VoiceClock;
}

export class OpusPacketSender implements VoiceTicker {
  readonly #onPlayed: ((playedMs: number) => void) | undefined;
  readonly #clock: VoiceClock;
  #outlet: PacketOutlet | undefined;
  #queue: Buffer[] = [];
  #head = 0;
  #silenceLeft = 0;
  #speaking = false;
  #queuedPackets = 0;
  #playedPackets = 0;
  #stretches = 0;
  #heldTicks = 0;
  #closed = false;

  constructor(options: OpusSenderOptions = {}) {
    this.#onPlayed = options.onPlayed;
    this.#clock = options.clock ?? sharedVoiceClock;
  }

  /** Sends through `outlet` from now on (none: packets are consumed as if heard). */
  connect(outlet: PacketOutlet | undefined): void {
    this.#outlet = outlet;
  }

  /** Queues packets (20 ms each, 48 kHz) after what is queued. */
  play(packets: readonly Uint8Array[]): void {
    if (this.#closed || packets.length === 0) return;
    for (const p of packets) this.#queue.push(asBuffer(p));
    this.#queuedPackets += packets.length;
    this.#clock.add(this);
  }

  /** Stops at once (no trailing silence) and drops every packet not yet sent; returns the ms dropped. */
  clear(): number {
    const dropped = this.#queue.length - this.#head;
    this.#queue = [];
    this.#head = 0;
    this.#queuedPackets -= dropped;
    this.#silenceLeft = 0;
    this.#stopSpeaking();
    this.#clock.remove(this);
    return dropped * OPUS_PACKET_MS;
  }

  queuedMs(): number {
    return this.#queuedPackets * OPUS_PACKET_MS;
  }

  playedMs(): number {
    return this.#playedPackets * OPUS_PACKET_MS;
  }

  /** Stretches of audio sent so far (each ends with silence frames, or a clear). */
  get stretches(): number {
    return this.#stretches;
  }

  /** Ticks a packet waited because the outlet was closed (DAVE not ready, reconnecting). */
  get heldTicks(): number {
    return this.#heldTicks;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.clear();
  }

  /** @internal One 20 ms step of the shared voice clock. */
  tick(): boolean {
    const pending = this.#queue.length - this.#head;
    if (pending === 0 && this.#silenceLeft === 0) return false;
    const outlet = this.#outlet;
    if (outlet && !outlet.open()) {
      this.#heldTicks++;
      return true;
    }
    if (pending > 0) {
      const packet = this.#queue[this.#head]!;
      this.#queue[this.#head++] = SILENCE_FRAME; // let the packet go
      if (this.#head === this.#queue.length) {
        this.#queue = [];
        this.#head = 0;
        this.#silenceLeft = SILENCE_FRAMES_AFTER_SPEECH;
      } else if (this.#head >= 1024) {
        this.#queue = this.#queue.slice(this.#head);
        this.#head = 0;
      }
      if (!this.#speaking) {
        this.#speaking = true;
        this.#stretches++;
      }
      outlet?.send(packet);
      this.#playedPackets++;
      this.#onPlayed?.(this.#playedPackets * OPUS_PACKET_MS);
      return true;
    }
    outlet?.send(SILENCE_FRAME);
    if (--this.#silenceLeft > 0) return true;
    this.#stopSpeaking();
    return false;
  }

  #stopSpeaking(): void {
    if (!this.#speaking) return;
    this.#speaking = false;
    this.#outlet?.speaking(false);
  }
}

function asBuffer(p: Uint8Array): Buffer {
  return Buffer.isBuffer(p) ? p : Buffer.from(p.buffer, p.byteOffset, p.byteLength);
}
