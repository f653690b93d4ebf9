// Members' packets read once per 20 ms tick of the shared voice clock, not one wake-up per packet.
// A Node process that sleeps between packets pays for every wake-up, and on some VMs dearly
// (`timer_20ms_floor_cpu_us_per_s` in `bench discord`: 2,600 µs/s on one 2-core VM, 5,600–10,000
// on another, i.e. 50–200 µs a wake-up before any work): three members speaking are 150 wake-ups a
// second on top of the clock's own 50.
//
// While members' packets flow, libuv stops reading the socket (its handle's recvStop, what dgram
// itself calls) and the kernel queues them in the socket's receive buffer (widened by
// voice-udp.ts). Each tick reads whatever is queued in one recvmmsg (native/discord/voice-socket.c),
// hands each datagram to `deliver` (the connection's receive router) and then runs `afterRead` (the
// conversation decodes what came): a packet waits for the next tick, as in the receive inbox alone
// (20 ms at most, 10 on average), and no longer. After 5 ticks without a packet, libuv reads as
// packets come again, so a quiet channel costs no tick.
//
// Stopping libuv's reading is not enough by itself: libuv leaves a stopped socket in its epoll set
// until it next fires, so reading with recvStart/recvStop around each tick still woke the loop once
// per tick per socket (tried: 310 → 180 wake-ups a second with 2 channels × 3 members). Once libuv
// has dropped the socket, nothing wakes the loop for it.
//
// Without the addon (not built) or the socket's handle (voice-socket-io.ts), packets are read as
// they come.
import { Buffer } from "node:buffer";
import type { Socket } from "node:dgram";
import { sharedVoiceClock, type VoiceClock, type VoiceTicker } from "./voice-clock.ts";
import { type VoiceSocketIo, voiceSocketIo } from "./voice-socket-io.ts";

/** Ticks without a packet before libuv reads as packets come again. */
export const IDLE_TICKS = 5;
/** Bytes per datagram slot: a voice packet (RTP, ≤ 1,275 bytes of Opus, the AEAD's 20) fits well. */
const SLOT_BYTES = 2048;
/** Slots per read; a fuller read is followed by another at once. */
const SLOTS = 64;

export interface TickReadsOptions {
  /** A datagram read at a tick; a view of a buffer reused at the next tick (use it before returning or in afterRead). */
  deliver(msg: Buffer): void;
  /** After each tick's datagrams are delivered, in the same turn of the loop. */
  afterRead(): void;
  /** A datagram longer than a slot (a voice packet never is: not Discord's), dropped. */
  oversized?(bytes: number): void;
  clock?: VoiceClock;
}

export class UdpTickReads implements VoiceTicker {
  readonly #io: VoiceSocketIo;
  readonly #o: TickReadsOptions;
  readonly #clock: VoiceClock;
  readonly #slab = new Uint8Array(SLOTS * SLOT_BYTES);
  readonly #lengths = new Int32Array(SLOTS);
  #batching = false;
  #idleTicks = 0;
  /** Member packets since the last tick (counted through packet(), however they were read). */
  #sinceTick = 0;
  #closed = false;

  private constructor(io: VoiceSocketIo, o: TickReadsOptions) {
    this.#io = io;
    this.#o = o;
    this.#clock = o.clock ?? sharedVoiceClock;
  }

  /** Tick reading for `socket`, or undefined when it cannot be had here (packets are then read as they come). */
  static of(socket: Socket, o: TickReadsOptions): UdpTickReads | undefined {
    const io = voiceSocketIo(socket);
    return io ? new UdpTickReads(io, o) : undefined;
  }

  /** Reading once per tick (members' packets are flowing). */
  get batching(): boolean {
    return this.#batching;
  }

  /** A member's packet was read (by libuv or at a tick): from now on, read once per tick. */
  packet(): void {
    this.#sinceTick++;
    if (this.#batching || this.#closed) return;
    this.#batching = true;
    this.#idleTicks = 0;
    this.#io.pauseLibuv();
    this.#clock.add(this);
  }

  /** @internal One step of the voice clock: delivers what queued since the last one. */
  tick(): boolean {
    if (this.#closed) return false;
    this.#read();
    if (this.#closed) return false;
    if (this.#sinceTick > 0) this.#idleTicks = 0;
    else if (++this.#idleTicks >= IDLE_TICKS) {
      this.#resume();
      return false;
    }
    this.#sinceTick = 0;
    return true;
  }

  /** libuv reads as packets come again, for good (a new socket, or the conversation ended). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#clock.remove(this);
    if (this.#batching) this.#resume();
  }

  #read(): void {
    const slab = this.#slab;
    const lengths = this.#lengths;
    let got: number;
    do {
      try {
        got = this.#io.drain(slab, SLOT_BYTES, lengths);
      } catch {
        // Closed under us (by the library; its descriptor may already be another socket's, which
        // drain() never reads): nothing more to read from it.
        this.close();
        return;
      }
      for (let i = 0; i < got && !this.#closed; i++) {
        const n = lengths[i]!;
        if (n < 0) this.#o.oversized?.(SLOT_BYTES);
        else if (n > 0) this.#o.deliver(Buffer.from(slab.buffer, i * SLOT_BYTES, n));
      }
      // Before the next read reuses the slots the delivered packets are views of.
      this.#o.afterRead();
    } while (got === SLOTS && !this.#closed);
  }

  #resume(): void {
    this.#batching = false;
    this.#io.resumeLibuv();
  }
}
