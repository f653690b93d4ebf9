// A simulated member of a voice channel, as a Discord client would be: its own SSRC, its own DAVE group
// membership (a davey session fed the external sender, proposals, commits and welcomes the fake routes to it),
// speech sent as 20 ms Opus frames paced in real time (DAVE-encrypted, then transport-encrypted), and a
// recording of everything the bot sends it (transport-decrypted, DAVE-decrypted, Opus-decoded) with arrival
// times, so tests can tell when the agent started and stopped speaking.

import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { DAVESession, type ProposalsOperationType } from "@snazzah/davey";
import { OpusCodec } from "../../codecs/opus.ts";
import { levelDbfs, stereoToMono } from "../../codecs/pcm.ts";
import { resample } from "../../codecs/resample.ts";
import { parseWav } from "../../codecs/wav.ts";
import { isDaveFrame } from "./media-frames.ts";
import { type RtpFields, sealRtp, type TransportMode } from "./transport-crypto.ts";

/** The 3-byte Opus silence frame Discord clients send (five of them) when they stop talking. */
export const SILENCE_FRAME = Buffer.from([0xf8, 0xff, 0xfe]);
const FRAME_MS = 20;
const FRAME_48K = 960;
const MEDIA_AUDIO = 0;
const APPEND = 0 as ProposalsOperationType;

export interface MemberInfo {
  userId: string;
  name: string;
}

/** How the member reaches the bot: set by the voice server while the bot is connected. */
export interface MemberLink {
  /** Sends an RTP packet to the bot's UDP address; `sealed` is already transport-encrypted. */
  sendUdp(sealed: Buffer): void;
  /** Sends opcode 5 Speaking for this member to the bot. */
  speaking(on: boolean): void;
  secretKey: Uint8Array;
  mode: TransportMode;
  channelId: string;
  /** Whether the call runs DAVE now (clear media is then dropped, as real clients do). */
  dave(): boolean;
}

/** One 20 ms frame the member heard: 48 kHz mono, with when it arrived (performance.now(), ms). */
export interface HeardFrame {
  at: number;
  pcm: Int16Array;
  silent: boolean;
}

export interface HearingStats {
  packets: number;
  daveDecrypted: number;
  daveFailures: number;
  opusFailures: number;
  /** Media frames dropped because they came unencrypted in a DAVE call (what real clients do). */
  clearDropped: number;
}

export class SimulatedMember {
  readonly userId: string;
  readonly name: string;
  readonly ssrc: number;
  #link: MemberLink | undefined;
  #dave: DAVESession | undefined;
  readonly #encoder = new OpusCodec(48000, 2);
  readonly #decoder = new OpusCodec(48000, 2);
  readonly #heard: HeardFrame[] = [];
  readonly #stats: HearingStats = {
    packets: 0,
    daveDecrypted: 0,
    daveFailures: 0,
    opusFailures: 0,
    clearDropped: 0,
  };
  #rtp: RtpFields;
  #nonce = 0;
  /** RTP packets sent to the bot (speech and silence frames). */
  sentPackets = 0;
  #speakingQueue: Promise<void> = Promise.resolve();

  constructor(info: MemberInfo, ssrc: number) {
    this.userId = info.userId;
    this.name = info.name;
    this.ssrc = ssrc;
    this.#rtp = { sequence: (ssrc * 7) & 0xffff, timestamp: (ssrc * 13) >>> 0, ssrc };
  }

  /** The member's davey session, once the bot's voice connection uses DAVE. */
  get dave(): DAVESession | undefined {
    return this.#dave;
  }

  /** The voice privacy code this member sees ("" until its group is active). */
  get privacyCode(): string {
    return this.#dave?.voicePrivacyCode ?? "";
  }

  get connected(): boolean {
    return this.#link !== undefined;
  }

  /** @internal The voice server attaches the member when both it and the bot are in the channel. */
  attach(link: MemberLink | undefined): void {
    this.#link = link;
  }

  /** @internal A fresh DAVE identity for a new group: returns the key package for the external Add. */
  startDave(channelId: string, externalSender: Uint8Array): Uint8Array {
    this.#dave = new DAVESession(1, this.userId, channelId);
    this.#dave.setExternalSender(Buffer.from(externalSender));
    return this.#dave.getSerializedKeyPackage();
  }

  /** @internal Drops DAVE (the bot left, or the call runs without it). */
  stopDave(): void {
    this.#dave = undefined;
  }

  /** @internal Proposals the server sent the group: members process them so commits can refer to them. */
  daveProposals(payload: Uint8Array, userIds: string[]): void {
    if (!this.#dave?.ready) return;
    this.#dave.processProposals(APPEND, Buffer.from(payload.subarray(1)), userIds);
  }

  /** @internal */
  daveCommit(commit: Uint8Array): void {
    this.#dave?.processCommit(Buffer.from(commit));
  }

  /** @internal */
  daveWelcome(welcome: Uint8Array): void {
    this.#dave?.processWelcome(Buffer.from(welcome));
  }

  /**
   * Speaks a WAV file (any rate, mono or stereo, 16-bit) or 16-bit PCM at `rate`, in real time: one 20 ms
   * Opus frame every 20 ms on a drift-free schedule, then Discord's five silence frames. Resolves once the
   * last frame is sent. Calls queue: a second `say` starts after the first ends.
   */
  say(audio: string | { pcm: Int16Array; rate: number }): Promise<void> {
    const run = this.#speakingQueue.then(() => this.#speak(audio));
    this.#speakingQueue = run.catch(() => {});
    return run;
  }

  async #speak(audio: string | { pcm: Int16Array; rate: number }): Promise<void> {
    const stereo = toStereo48k(audio);
    const link = this.#requireLink();
    link.speaking(true);
    const start = performance.now();
    const frames = Math.ceil(stereo.length / (2 * FRAME_48K));
    const frame = new Int16Array(2 * FRAME_48K);
    for (let i = 0; i < frames; i++) {
      frame.fill(0);
      frame.set(stereo.subarray(i * 2 * FRAME_48K, (i + 1) * 2 * FRAME_48K));
      this.#send(this.#encoder.encode(frame));
      const due = start + (i + 1) * FRAME_MS - performance.now();
      if (due > 0) await sleep(due);
    }
    for (let i = 0; i < 5; i++) this.#send(SILENCE_FRAME);
    this.#requireLink().speaking(false);
  }

  #send(opus: Uint8Array): void {
    const link = this.#requireLink();
    const isSilence = opus.length === 3 && Buffer.from(opus).equals(SILENCE_FRAME);
    const payload = this.#dave?.ready && !isSilence ? this.#dave.encryptOpus(Buffer.from(opus)) : opus;
    this.#nonce = (this.#nonce + 1) >>> 0;
    link.sendUdp(sealRtp(link.mode, link.secretKey, this.#rtp, this.#nonce, payload));
    this.sentPackets++;
    this.#rtp.sequence = (this.#rtp.sequence + 1) & 0xffff;
    this.#rtp.timestamp = (this.#rtp.timestamp + FRAME_48K) >>> 0;
  }

  #requireLink(): MemberLink {
    if (!this.#link) throw new Error(`member ${this.userId} is not in a voice call with the bot`);
    return this.#link;
  }

  /** @internal A packet from the bot, already transport-decrypted. */
  hear(botUserId: string, payload: Buffer, at: number): void {
    this.#stats.packets++;
    if (payload.equals(SILENCE_FRAME)) {
      this.#heard.push({ at, pcm: new Int16Array(FRAME_48K), silent: true });
      return;
    }
    let opus = payload;
    if (!isDaveFrame(payload) && this.#link?.dave()) {
      this.#stats.clearDropped++;
      return;
    }
    if (this.#dave?.ready) {
      try {
        opus = this.#dave.decrypt(botUserId, MEDIA_AUDIO, payload);
        this.#stats.daveDecrypted++;
      } catch {
        this.#stats.daveFailures++;
        return;
      }
    }
    try {
      const mono = stereoToMono(this.#decoder.decode(opus));
      this.#heard.push({ at, pcm: mono, silent: levelDbfs(mono) < -55 });
    } catch {
      this.#stats.opusFailures++;
    }
  }

  get hearingStats(): HearingStats {
    return { ...this.#stats };
  }

  /** Every frame heard so far, in arrival order. */
  heardFrames(): readonly HeardFrame[] {
    return this.#heard;
  }

  /** The audio heard so far, 48 kHz mono, frames concatenated in arrival order (gaps not filled). */
  heard(): Int16Array {
    const out = new Int16Array(this.#heard.length * FRAME_48K);
    this.#heard.forEach((f, i) => {
      out.set(f.pcm, i * FRAME_48K);
    });
    return out;
  }

  /**
   * The audio heard so far on a 48 kHz mono timeline that keeps the gaps: each frame goes in the 20 ms slot
   * of its arrival after the first frame's (or right after the previous frame if jitter brought it early).
   * `startAt` is the first frame's arrival (performance.now(), ms).
   */
  heardTimeline(): { startAt: number; pcm: Int16Array } {
    const first = this.#heard[0];
    if (!first) return { startAt: 0, pcm: new Int16Array(0) };
    const slots: number[] = [];
    let previous = -1;
    for (const f of this.#heard) {
      const slot = Math.max(previous + 1, Math.round((f.at - first.at) / FRAME_MS));
      slots.push(slot);
      previous = slot;
    }
    const pcm = new Int16Array((previous + 1) * FRAME_48K);
    this.#heard.forEach((f, i) => {
      pcm.set(f.pcm, slots[i]! * FRAME_48K);
    });
    return { startAt: first.at, pcm };
  }

  /**
   * When the bot's voice was audible: runs of non-silent frames whose arrivals are less than `gapMs` apart,
   * as [start of first frame, end of last frame] in performance.now() milliseconds.
   */
  agentSpeechSpans(gapMs = 200): { start: number; end: number }[] {
    const spans: { start: number; end: number }[] = [];
    for (const f of this.#heard) {
      if (f.silent) continue;
      const last = spans.at(-1);
      if (last && f.at - last.end < gapMs) last.end = f.at + FRAME_MS;
      else spans.push({ start: f.at, end: f.at + FRAME_MS });
    }
    return spans;
  }

  /** Forgets what was heard (between phases of a test). */
  clearHeard(): void {
    this.#heard.length = 0;
  }
}

/** What a member speaks, as the 48 kHz stereo PCM its client encodes (a mono source in both channels). */
export function toStereo48k(audio: string | { pcm: Int16Array; rate: number }): Int16Array {
  let mono: Int16Array;
  let rate: number;
  if (typeof audio === "string") {
    const wav = parseWav(readFileSync(audio));
    if (wav.format !== "pcm" || wav.bitsPerSample !== 16) {
      throw new Error(`${audio}: members speak 16-bit PCM WAV, not ${wav.format}/${wav.bitsPerSample}`);
    }
    mono = wav.channels === 2 ? stereoToMono(wav.samples) : wav.samples;
    if (wav.channels > 2) throw new Error(`${audio}: ${wav.channels} channels; mono or stereo only`);
    rate = wav.sampleRate;
  } else {
    mono = audio.pcm;
    rate = audio.rate;
  }
  const at48 = rate === 48000 ? mono : resample(mono, rate, 48000);
  const stereo = new Int16Array(at48.length * 2);
  for (let i = 0; i < at48.length; i++) {
    stereo[2 * i] = at48[i]!;
    stereo[2 * i + 1] = at48[i]!;
  }
  return stereo;
}
