// The agent's voice on one call's RTP stream. The shared Pacer gives every 20 ms packet its slot
// on the monotonic clock, at most five packets ahead of the caller's playout (enough to ride out
// a timer 80 ms late, little enough that a barge-in is heard within a tenth of a second). Between replies the same pacer
// sends silence (one packet per slot, pushed only when its slot has come), so the stream never
// stops: NAT bindings stay open, and the caller's jitter buffer sees one unbroken timeline in
// which a reply simply starts (marker set) in the next slot. If the clock ever falls behind (an
// underrun), the RTP timestamp jumps by the time lost, with the marker, as it would after a
// pause. G.711 is encoded per frame by lookup; Opus packets from the TTS go out as they are
// (the pacer then queues one placeholder sample per packet, and the packets wait here).
//
// What the caller has heard (playedMs) is read off the send clock: audio sent, less what is
// still ahead of their playout. RTP cannot call back packets already sent, so clear() drops
// what is unsent and counts what was sent as heard.
import type { Clock, TimerHandle } from "../../../src/session/clock.ts";
import { Pacer } from "../../pacer.ts";
import { type AgentAudio, OPUS_PACKET_MS } from "../../transport.ts";
import type { SipCodecName } from "../media-port.ts";
import { g711Encoder, g711SilenceByte, opusSilencePacket, ticksPer20ms } from "./payload.ts";
import type { RtpSender } from "./sender.ts";

const FRAME_MS = 20;
/**
 * Most audio sent ahead of the caller's playout, ms: five packets. RTP cannot call back what was
 * sent, so this is also the most the caller hears after a barge-in clears the agent. With two
 * (40 ms), the sip-media benchmark at 100 calls saw about one underrun per call in 13 s. With three
 * (60 ms), the calls benchmark at 200 SIP calls still had event-loop stalls past the lead: 446 to
 * 1,871 frames of holes in 30 s, run to run; with five, 30 (same machine, same day).
 */
export const RTP_LEAD_MS = 100;

export interface RtpOutboundOptions {
  clock: Clock;
  codec: SipCodecName;
  sender: RtpSender;
  /** Whether packets go on the wire now (not while the caller holds); the timeline runs on regardless. */
  transmitting(): boolean;
  /** The playout position moved (ms of agent audio heard). */
  played(ms: number): void;
}

export interface RtpOutboundStats {
  audioPackets: number;
  silencePackets: number;
  underruns: number;
  pacer: Pacer["stats"];
}

export class RtpOutbound {
  readonly #clock: Clock;
  readonly #sender: RtpSender;
  readonly #opus: boolean;
  readonly #ticksPerMs: number;
  readonly #ticks: number;
  readonly #transmitting: () => boolean;
  readonly #played: (ms: number) => void;
  readonly #pacer: Pacer;
  readonly #encode: ((pcm: Int16Array, out: Uint8Array) => Uint8Array) | undefined;
  readonly #silence: Uint8Array;
  readonly #g711 = new Uint8Array(160);
  readonly #silenceFrame: Int16Array;
  /** Opus packets waiting for their slot. */
  #opusQueue: Uint8Array[] = [];
  #opusHead = 0;
  /** The frame being pushed is silence (it goes out within the push: its slot has come). */
  #pushingSilence = false;
  #queuedMs = 0;
  #sentAudioMs = 0;
  /** When the caller will have played the last audio sent (clock ms). */
  #audioEnd = Number.NEGATIVE_INFINITY;
  #playedMs = 0;
  #reportedMs = 0;
  /** Where the next slot starts on the stream's timeline (clock ms); NaN before the first. */
  #nextSlot = Number.NaN;
  /** The last packet was silence: the next audio starts a talkspurt. */
  #quiet = true;
  #first = true;
  #audioPackets = 0;
  #silencePackets = 0;
  #underruns = 0;
  #idleTimer: TimerHandle | undefined;
  #closed = false;
  readonly #onIdle = () => this.#idle();

  constructor(opts: RtpOutboundOptions) {
    this.#clock = opts.clock;
    this.#sender = opts.sender;
    this.#opus = opts.codec === "opus";
    this.#ticks = ticksPer20ms(opts.codec);
    this.#ticksPerMs = this.#ticks / FRAME_MS;
    this.#transmitting = opts.transmitting;
    this.#played = opts.played;
    if (opts.codec === "opus") {
      this.#encode = undefined;
      this.#silence = opusSilencePacket();
    } else {
      this.#encode = g711Encoder(opts.codec);
      this.#silence = new Uint8Array(160).fill(g711SilenceByte(opts.codec));
    }
    this.#silenceFrame = new Int16Array(this.#opus ? 1 : 160);
    this.#pacer = new Pacer({
      clock: opts.clock,
      frameSamples: this.#opus ? 1 : 160,
      frameMs: FRAME_MS,
      leadMs: RTP_LEAD_MS,
      send: (frame, samples) => this.#slot(frame, samples),
    });
  }

  /** Starts the stream (silence until the agent speaks). */
  start(): void {
    this.#idle();
  }

  play(audio: AgentAudio): void {
    if (this.#closed) return;
    if (this.#opus) {
      if (audio instanceof Int16Array)
        throw new TypeError("this SIP call plays Opus packets (its output is opus), not PCM");
      const n = audio.packets.length;
      if (n === 0) return;
      for (const p of audio.packets) this.#opusQueue.push(p);
      this.#queuedMs += n * OPUS_PACKET_MS;
      this.#pacer.push(new Int16Array(n));
      return;
    }
    if (!(audio instanceof Int16Array))
      throw new TypeError("this SIP call plays PCM at 8 kHz (its output is pcm), not Opus packets");
    if (audio.length === 0) return;
    this.#queuedMs += audio.length / 8;
    this.#pacer.push(audio);
  }

  /** Drops unsent audio; returns how much, ms. What was sent is heard: queuedMs() = playedMs() after. */
  clear(): number {
    if (this.#closed) return 0;
    const unsent = this.#queuedMs - this.#sentAudioMs;
    this.#pacer.clear(true);
    this.#opusQueue = [];
    this.#opusHead = 0;
    this.#queuedMs = this.#sentAudioMs;
    this.#playedMs = this.#sentAudioMs;
    this.#audioEnd = this.#clock.now();
    this.#report();
    this.#scheduleIdle();
    return unsent;
  }

  queuedMs(): number {
    return this.#queuedMs;
  }

  playedMs(): number {
    const ahead = Math.max(0, this.#audioEnd - this.#clock.now());
    const heard = Math.min(this.#queuedMs, this.#sentAudioMs - ahead);
    if (heard > this.#playedMs) this.#playedMs = heard;
    return this.#playedMs;
  }

  get stats(): RtpOutboundStats {
    return {
      audioPackets: this.#audioPackets,
      silencePackets: this.#silencePackets,
      underruns: this.#underruns,
      pacer: this.#pacer.stats,
    };
  }

  close(): void {
    this.#closed = true;
    this.#pacer.close();
    this.#opusQueue = [];
    this.#clock.clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
  }

  /** The pacer's slot for one frame: audio, or the silence frame pushed by #idle. */
  #slot(frame: Int16Array, samples: number): void {
    const now = this.#clock.now();
    // The pacer has already moved its playout end past this frame.
    const start = now + this.#pacer.aheadMs - FRAME_MS;
    let marker = this.#first;
    if (start > this.#nextSlot + 1) {
      // The clock fell behind: the stream's timestamp skips the time lost.
      this.#sender.skip(Math.round((start - this.#nextSlot) * this.#ticksPerMs));
      this.#underruns++;
      marker = true;
    }
    this.#nextSlot = start + FRAME_MS;
    this.#first = false;
    const transmit = this.#transmitting();
    if (this.#pushingSilence) {
      this.#sender.sendPayload(this.#silence, this.#ticks, marker, transmit);
      this.#silencePackets++;
      this.#quiet = true;
      return;
    }
    marker ||= this.#quiet;
    this.#quiet = false;
    if (this.#opus) {
      const packet = this.#opusQueue[this.#opusHead++]!;
      if (this.#opusHead === this.#opusQueue.length) {
        this.#opusQueue = [];
        this.#opusHead = 0;
      }
      this.#sender.sendPayload(packet, this.#ticks, marker, transmit);
      this.#sentAudioMs += OPUS_PACKET_MS;
    } else {
      this.#sender.sendPayload(this.#encode!(frame, this.#g711), this.#ticks, marker, transmit);
      this.#sentAudioMs += samples / 8;
    }
    this.#audioPackets++;
    this.#audioEnd = start + FRAME_MS;
    this.#report();
    if (this.#pacer.queuedSamples === 0) this.#scheduleIdle();
  }

  /** A silence slot has come (or the stream starts): fill it, unless audio is queued. */
  #idle(): void {
    this.#idleTimer = undefined;
    if (this.#closed || this.#pacer.queuedSamples > 0) return;
    this.#report();
    if (this.#pacer.aheadMs <= RTP_LEAD_MS - FRAME_MS) {
      this.#pushingSilence = true;
      this.#pacer.push(this.#silenceFrame);
      this.#pushingSilence = false;
    }
    this.#scheduleIdle();
  }

  /** Wakes when the caller's playout has room for the next silence slot. */
  #scheduleIdle(): void {
    if (this.#closed) return;
    this.#clock.clearTimeout(this.#idleTimer);
    const wait = Math.max(0, this.#pacer.aheadMs - (RTP_LEAD_MS - FRAME_MS));
    this.#idleTimer = this.#clock.setTimeout(this.#onIdle, wait);
  }

  #report(): void {
    const played = this.playedMs();
    if (played === this.#reportedMs) return;
    this.#reportedMs = played;
    this.#played(played);
  }
}
