// Typed access to the RTP send thread (native/rtp/sender.c, built by native/build.sh): one
// native thread per process sends every SIP call's packets on a 20 ms grid of the monotonic
// clock, so pacing no longer depends on how busy a JS event loop is.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { Gauge, type Registry } from "prom-client";

export const RTP_SENDER_ADDON_PATH = fileURLToPath(
  new URL("../../../native/build/rtp-sender.node", import.meta.url),
);

/** One call's stream as the send thread starts it. */
export interface NativeStreamOptions {
  payloadType: number;
  ssrc: number;
  sequence: number;
  timestamp: number;
  /** RTP clock ticks per 20 ms packet. */
  ticks: number;
  /** Largest payload this call queues (160 for G.711, 1275 for Opus). */
  slotBytes: number;
  /** 1: packets go on the wire; 0: the timeline runs on without them (the caller holds). */
  transmit: 0 | 1;
}

export interface NativeCallCounts {
  audioPackets: number;
  silencePackets: number;
  /** Datagrams handed to the kernel. */
  packets: number;
  sendErrors: number;
  /** Times the thread was so late that the stream's timestamp jumped the time lost. */
  skips: number;
}

export interface NativeThreadStats {
  ticks: number;
  lateMsP50: number;
  lateMsP99: number;
  lateMsMax: number;
  /** 1 when the thread got real-time priority (SCHED_FIFO, needs CAP_SYS_NICE), else 0. */
  realtime: number;
}

/** Opaque inbound SRTP session (freed when collected). */
export type SrtpInbound = object & { readonly __srtpInbound: unique symbol };

/** Opaque outbound SRTP session (freed when collected). */
export type SrtpOutbound = object & { readonly __srtpOutbound: unique symbol };

/** Opaque handle of a registered call. */
export type NativeStream = number & { readonly __nativeRtpStream: unique symbol };

export interface RtpSenderAddon {
  /** A UDP socket bound to host:port (an IP literal), for dgram to adopt: its fd, or −errno. */
  bindUdp(host: string, port: number): number;
  /**
   * When the kernel received the datagram last read from `fd` (SIOCGSTAMPNS), in ms on the monotonic
   * clock (process.hrtime's: bench/lib/monotonic-clock.ts makes it performance.now() time), NaN before
   * the first stamped one; the first call turns stamping on. In a dgram 'message' handler, that
   * message's arrival.
   */
  rxStampMs(fd: number): number;
  /** Registers a call; with `srtpKey` (30 bytes, ours) and `srtpTagBits` its packets leave as SRTP. */
  open(
    fd: number,
    opts: NativeStreamOptions,
    silence: Buffer,
    srtpKey?: Buffer,
    srtpTagBits?: 80 | 32,
  ): NativeStream;
  /** What libsrtp2's ciphers run on: its OpenSSL backend (native/build.sh), or Debian's NSS build. */
  readonly srtpCrypto: "openssl" | "nss" | "unknown";
  /** An inbound SRTP session keyed by the caller's SDES key (libsrtp: replay window, rollover counter). */
  srtpInbound(key: Buffer, tagBits: 80 | 32): SrtpInbound;
  /** An outbound SRTP session for packets protected from JS (the bridge's own go through the send thread). */
  srtpOutbound(key: Buffer, tagBits: 80 | 32): SrtpOutbound;
  /** Encrypts buffer[0..length) in place and appends the tag (16 spare bytes needed): the new length, or −status. */
  srtpProtect(session: SrtpOutbound, buffer: Buffer, length: number): number;
  /** Checks and decrypts an SRTP packet in place: the plain packet's length, or −(libsrtp status). */
  srtpUnprotect(session: SrtpInbound, packet: Buffer): number;
  /**
   * Queues payloads (each `slotBytes` long, or as `lengths` says); how many are queued now. `events`
   * marks RFC 4733 telephone-event slots (dtmf-send.ts), one entry per payload, 0 for audio.
   */
  push(stream: NativeStream, payloads: Buffer, lengths?: Uint16Array, events?: Uint16Array): number;
  /** Drops the unsent payloads; how many. */
  clear(stream: NativeStream): number;
  /** Audio payloads sent so far. */
  sent(stream: NativeStream): number;
  /** New payload type / transmit state, and the destination (false: not an IP literal). */
  update(
    stream: NativeStream,
    opts: { payloadType: number; transmit: 0 | 1 },
    host?: string,
    port?: number,
  ): boolean;
  stats(stream: NativeStream): NativeCallCounts & { queued: number };
  stats(): NativeThreadStats;
  /** Unregisters the call: the thread no longer touches its fd when this returns. */
  close(stream: NativeStream): NativeCallCounts;
}

let addon: RtpSenderAddon | undefined;

/** The addon, loaded on first use (a bridge without SIP never loads it). */
export function rtpSender(): RtpSenderAddon {
  if (addon) return addon;
  if (!existsSync(RTP_SENDER_ADDON_PATH))
    throw new Error(
      `SIP media needs the RTP send thread's addon, ${RTP_SENDER_ADDON_PATH}: run make setup to build it`,
    );
  addon = createRequire(import.meta.url)(RTP_SENDER_ADDON_PATH) as RtpSenderAddon;
  return addon;
}

/**
 * Exposes the send thread's wake-up lateness on /metrics (`voice_bridge_rtp_send_late_ms`, since
 * the process started): how late the agent's packets leave, apart from any network or far side.
 */
export function registerRtpSendMetrics(registry: Registry): void {
  new Gauge({
    name: "voice_bridge_rtp_send_late_ms",
    help: "how late the RTP send thread woke for its 20 ms ticks since start, ms (1 ms buckets)",
    labelNames: ["quantile"],
    registers: [registry],
    collect() {
      // The thread's figures are the process's, whichever thread loaded the addon.
      const s = rtpSender().stats();
      this.set({ quantile: "0.5" }, s.lateMsP50);
      this.set({ quantile: "0.99" }, s.lateMsP99);
      this.set({ quantile: "1" }, s.lateMsMax);
    },
  });
  new Gauge({
    name: "voice_bridge_rtp_send_realtime",
    help: "1 when the RTP send thread runs at real-time priority (SCHED_FIFO; needs CAP_SYS_NICE)",
    registers: [registry],
    collect() {
      this.set(rtpSender().stats().realtime);
    },
  });
}
