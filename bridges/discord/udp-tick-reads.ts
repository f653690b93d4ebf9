// Members' packets read once per 20 ms tick of the shared voice clock, not one wake-up per packet.
// A Node process that sleeps between packets pays for every wake-up, and on some VMs dearly
// (`timer_20ms_floor_cpu_us_per_s` in `bench discord`: 2,600 µs/s on one 2-core VM, 5,600–10,000
// on another, i.e. 50–200 µs a wake-up before any work): three members speaking are 150 wake-ups a
// second on top of the clock's own 50.
//
// While members' packets flow, libuv stops reading the socket (its handle's recvStop, what dgram
// itself calls) and the kernel queues them in the socket's receive buffer (widened by
// voice-udp.ts). Each tick reads whatever is queued in one recvmmsg (native/discord/udp-drain.c),
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
// Node's dgram has no pause() and no file descriptor in its API: the handle is found by its symbol's
// description. Without it, or without the addon (not built), packets are read as they come.
import { Buffer } from "node:buffer";
import type { Socket } from "node:dgram";
import { createRequire } from "node:module";
import { sharedVoiceClock, type VoiceClock, type VoiceTicker } from "./voice-clock.ts";

/** Ticks without a packet before libuv reads as packets come again. */
export const IDLE_TICKS = 5;
/** Bytes per datagram slot: a voice packet (RTP, ≤ 1,275 bytes of Opus, the AEAD's 20) fits well. */
const SLOT_BYTES = 2048;
/** Slots per read; a fuller read is followed by another at once. */
const SLOTS = 64;

interface Addon {
  drain(fd: number, slab: Uint8Array, slotBytes: number, lengths: Int32Array): number;
}

function loadAddon(): Addon | undefined {
  try {
    return createRequire(import.meta.url)("../../native/build/discord-udp-drain.node") as Addon;
  } catch {
    return undefined;
  }
}

const addon = loadAddon();

interface UdpHandle {
  readonly fd: number;
  recvStart(): number;
  recvStop(): number;
}

function handleOf(socket: Socket): UdpHandle | undefined {
  const symbol = Object.getOwnPropertySymbols(socket).find((s) => s.description === "state symbol");
  const state = symbol ? (socket as unknown as Record<symbol, { handle?: unknown }>)[symbol] : undefined;
  const handle = state?.handle as Partial<UdpHandle> | undefined;
  return typeof handle?.recvStart === "function" &&
    typeof handle.recvStop === "function" &&
    typeof handle.fd === "number" &&
    handle.fd >= 0
    ? (handle as UdpHandle)
    : undefined;
}

export interface TickReadsOptions {
  /** A datagram read at a tick; a view of a buffer reused at the next tick (use it before returning or in afterRead). */
  deliver(msg: Buffer): void;
  /** After each tick's datagrams are delivered, in the same turn of the loop. */
  afterRead(): void;
  /** A datagram longer than a slot, dropped (counted by the caller). */
  oversized?(bytes: number): void;
  clock?: VoiceClock;
}

export class UdpTickReads implements VoiceTicker {
  readonly #handle: UdpHandle;
  readonly #addon: Addon;
  readonly #o: TickReadsOptions;
  readonly #clock: VoiceClock;
  readonly #slab = new Uint8Array(SLOTS * SLOT_BYTES);
  readonly #lengths = new Int32Array(SLOTS);
  #batching = false;
  #idleTicks = 0;
  /** Member packets since the last tick (counted through packet(), however they were read). */
  #sinceTick = 0;
  #closed = false;

  private constructor(handle: UdpHandle, a: Addon, o: TickReadsOptions) {
    this.#handle = handle;
    this.#addon = a;
    this.#o = o;
    this.#clock = o.clock ?? sharedVoiceClock;
  }

  /** Tick reading for `socket`, or undefined when it cannot be had here (packets are then read as they come). */
  static of(socket: Socket, o: TickReadsOptions, a: Addon | undefined = addon): UdpTickReads | undefined {
    const handle = handleOf(socket);
    return handle && a ? new UdpTickReads(handle, a, o) : undefined;
  }

  /** Whether this process can read voice sockets per tick (the addon is built). */
  static get available(): boolean {
    return addon !== undefined;
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
    try {
      this.#handle.recvStop();
    } catch {
      // A closed socket: the next tick reads nothing and goes idle.
    }
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
      // Read at every call: a handle that dgram closed reports a negative fd at once, before its
      // 'close' event, and the number it had may already be another socket's.
      const fd = this.#handle.fd;
      if (fd < 0) {
        this.close();
        return;
      }
      try {
        got = this.#addon.drain(fd, slab, SLOT_BYTES, lengths);
      } catch {
        // The socket went away under us (closed by the library): nothing more to read from it.
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
    try {
      this.#handle.recvStart();
    } catch {
      // A closed socket: nothing to read.
    }
  }
}
