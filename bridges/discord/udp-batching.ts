// Members' packets read once per 20 ms tick, not one wake-up per packet. On this kind of VM a Node
// process pays ~100 µs to wake (timer_20ms_floor_cpu_us_per_s: 4,000–5,000 µs/s for 50 wake-ups),
// so three members speaking cost 150 wake-ups a second before any work. While packets flow, the
// socket's reading is stopped between ticks of the shared voice clock (the kernel queues them in
// the socket's receive buffer, widened for that); each tick starts reading, libuv drains what is
// queued in the same turn of the loop, and reading stops again. After 5 ticks without a packet,
// reading goes back to per-packet, so a quiet channel costs no tick at all. Adds up to one tick
// (20 ms) of delay to what is heard.
//
// Node's dgram has no pause(): this uses its socket's handle (recvStart/recvStop, what dgram itself
// calls), found by its symbol's description; when it is not there, packets are read as they come.
import type { Socket } from "node:dgram";
import { sharedVoiceClock, type VoiceClock, type VoiceTicker } from "./voice-clock.ts";

/** libuv reads at most about 32 datagrams per readiness event: a round this full may have left more. */
const READS_PER_ROUND = 32;
const IDLE_TICKS = 5;

interface UdpHandle {
  recvStart(): number;
  recvStop(): number;
}

function handleOf(socket: Socket): UdpHandle | undefined {
  const symbol = Object.getOwnPropertySymbols(socket).find((s) => s.description === "state symbol");
  const state = symbol ? (socket as unknown as Record<symbol, { handle?: unknown }>)[symbol] : undefined;
  const handle = state?.handle as Partial<UdpHandle> | undefined;
  return typeof handle?.recvStart === "function" && typeof handle.recvStop === "function"
    ? (handle as UdpHandle)
    : undefined;
}

export class UdpBatching implements VoiceTicker {
  readonly #handle: UdpHandle;
  readonly #clock: VoiceClock;
  #batching = false;
  #reading = true;
  #idleTicks = 0;
  /** Packets since the last tick, and in the current read round. */
  #sinceTick = 0;
  #inRound = 0;
  #closed = false;

  private constructor(handle: UdpHandle, clock: VoiceClock) {
    this.#handle = handle;
    this.#clock = clock;
  }

  /** Batching for `socket`, or undefined when its handle cannot be reached (packets read as they come). */
  static of(socket: Socket, clock: VoiceClock = sharedVoiceClock): UdpBatching | undefined {
    const handle = handleOf(socket);
    return handle ? new UdpBatching(handle, clock) : undefined;
  }

  /** A packet was read: from now on, read once per tick. */
  packet(): void {
    this.#sinceTick++;
    this.#inRound++;
    if (this.#batching || this.#closed) return;
    this.#batching = true;
    this.#idleTicks = 0;
    this.#stop();
    this.#clock.add(this);
  }

  /** @internal One step of the voice clock: read what queued since the last one. */
  tick(): boolean {
    if (this.#closed) return false;
    if (this.#sinceTick === 0 && ++this.#idleTicks >= IDLE_TICKS) {
      this.#batching = false;
      this.#start();
      return false;
    }
    if (this.#sinceTick > 0) this.#idleTicks = 0;
    this.#sinceTick = 0;
    this.#round();
    return true;
  }

  /** Reads as packets come again (the socket is closing, or the connection went). */
  close(): void {
    this.#closed = true;
    this.#batching = false;
    this.#clock.remove(this);
    this.#start();
  }

  /** Starts reading; after the loop's poll phase has read (a full round: once more), stops. */
  #round(): void {
    this.#inRound = 0;
    this.#start();
    setImmediate(() => {
      if (!this.#batching) return;
      if (this.#inRound >= READS_PER_ROUND) this.#round();
      else this.#stop();
    });
  }

  #start(): void {
    if (this.#reading) return;
    this.#reading = true;
    try {
      this.#handle.recvStart();
    } catch {
      // A closed socket: nothing to read.
    }
  }

  #stop(): void {
    if (!this.#reading) return;
    this.#reading = false;
    try {
      this.#handle.recvStop();
    } catch {
      // A closed socket.
    }
  }
}
