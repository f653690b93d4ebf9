// A simulated member of a Discord voice channel: a DAVE group member of its own (a davey
// session, as Discord's clients are), who speaks Opus made from PCM in real time and records
// what it hears from the bot (transport- and DAVE-decrypted by the server and itself, decoded,
// with arrival times), so tests can tell when the agent's voice started and stopped.
import davey from "@snazzah/davey";
import { OpusCodec } from "../../codecs/opus.ts";

/** davey's MediaType.AUDIO (a const enum in its typings, which erasable TypeScript cannot read). */
const AUDIO = 0 as davey.MediaType;
const FRAME = 960; // 20 ms at 48 kHz

export interface HeardPacket {
  /** performance.now() when it arrived. */
  at: number;
  /** 48 kHz mono PCM of the packet. */
  pcm: Int16Array;
}

/** What the voice server does for a member: send its packets to the bot, tell who speaks. */
export interface MemberLink {
  sendOpus(member: SimMember, payload: Uint8Array): void;
  speaking(member: SimMember, on: boolean): void;
}

export class SimMember {
  readonly userId: string;
  readonly name: string;
  readonly ssrc: number;
  readonly dave: davey.DAVESession;
  readonly heard: HeardPacket[] = [];
  /** Packets from the bot this member could not decrypt (a DAVE problem). */
  undecryptable = 0;
  #encoder = new OpusCodec(48000, 2);
  #decoder = new OpusCodec(48000, 1);
  link: MemberLink | undefined;
  #sequence = 0;
  #timestamp = 0;
  #speaking: Promise<void> = Promise.resolve();

  constructor(opts: { userId: string; name: string; ssrc: number; channelId: string }) {
    this.userId = opts.userId;
    this.name = opts.name;
    this.ssrc = opts.ssrc;
    this.dave = new davey.DAVESession(1, opts.userId, opts.channelId);
  }

  nextRtp(): { sequence: number; timestamp: number; ssrc: number } {
    this.#sequence = (this.#sequence + 1) & 0xffff;
    this.#timestamp = (this.#timestamp + FRAME) >>> 0;
    return { sequence: this.#sequence, timestamp: this.#timestamp, ssrc: this.ssrc };
  }

  /**
   * Speaks mono 48 kHz PCM in real time (20 ms packets, catching up when late), after anything it
   * was already saying; resolves when the last packet is sent. Discord clients send five silence
   * frames after speech and then nothing, and so does this.
   */
  say(pcm48k: Int16Array): Promise<void> {
    this.#speaking = this.#speaking.then(() => this.#say(pcm48k));
    return this.#speaking;
  }

  async #say(pcm: Int16Array): Promise<void> {
    const link = this.link;
    if (!link) throw new Error(`member ${this.name} is not in a voice channel`);
    link.speaking(this, true);
    const stereo = new Int16Array(FRAME * 2);
    const start = performance.now();
    let k = 0;
    for (let i = 0; i < pcm.length; i += FRAME, k++) {
      const wait = start + k * 20 - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      for (let j = 0; j < FRAME; j++) {
        const s = pcm[i + j] ?? 0;
        stereo[2 * j] = s;
        stereo[2 * j + 1] = s;
      }
      this.#send(this.#encoder.encode(stereo));
    }
    for (let n = 0; n < 5; n++, k++) {
      const wait = start + k * 20 - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      this.#send(SILENCE_FRAME);
    }
    link.speaking(this, false);
  }

  #send(opus: Uint8Array): void {
    const frame = this.dave.ready && opus !== SILENCE_FRAME ? this.dave.encryptOpus(Buffer.from(opus)) : opus;
    this.link?.sendOpus(this, frame);
  }

  /** A DAVE frame of the bot's (already out of its transport encryption). */
  hear(fromUserId: string, frame: Buffer): void {
    let opus: Buffer = frame;
    if (!frame.equals(SILENCE_FRAME) && this.dave.ready) {
      try {
        opus = this.dave.decrypt(fromUserId, AUDIO, frame);
      } catch {
        this.undecryptable++;
        return;
      }
    }
    if (opus.equals(SILENCE_FRAME)) return;
    try {
      this.heard.push({ at: performance.now(), pcm: this.#decoder.decode(opus) });
    } catch {
      this.undecryptable++;
    }
  }

  /** Everything heard, back to back (48 kHz mono). */
  heardPcm(): Int16Array {
    const out = new Int16Array(this.heard.reduce((n, p) => n + p.pcm.length, 0));
    let at = 0;
    for (const p of this.heard) {
      out.set(p.pcm, at);
      at += p.pcm.length;
    }
    return out;
  }

  /** When the agent's audio reached this member: first and last packet times of each stretch. */
  agentSpans(gapMs = 200): { from: number; to: number }[] {
    const spans: { from: number; to: number }[] = [];
    for (const p of this.heard) {
      const last = spans.at(-1);
      if (last && p.at - last.to <= gapMs) last.to = p.at;
      else spans.push({ from: p.at, to: p.at });
    }
    return spans;
  }
}

/** The Opus silence frame Discord clients send (and that DAVE leaves unencrypted). */
export const SILENCE_FRAME = Buffer.from([0xf8, 0xff, 0xfe]);
