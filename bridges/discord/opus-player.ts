// The agent's voice into a Discord voice channel, as the TTS made it: Opus packets handed to an
// @discordjs/voice AudioPlayer as raw Opus (StreamType.Opus), never decoded nor re-encoded.
//
// Playout is counted where the player takes packets: the player reads one packet from our stream
// per 20 ms cycle to send it in the next, so the packets read are what the channel has heard (one
// cycle ahead at most). A stretch of audio is one resource; when the player runs dry for 5 cycles
// it stops that resource (5 frames of silence padding, then idle), so the next play() starts a new
// one. clear() stops the player with force (no trailing silence) and drops what was not read.
import { Buffer } from "node:buffer";
import { Readable } from "node:stream";
import {
  type AudioPlayer,
  AudioPlayerStatus,
  type AudioResource,
  createAudioPlayer,
  createAudioResource,
  NoSubscriberBehavior,
  StreamType,
} from "@discordjs/voice";
import { OPUS_PACKET_MS } from "../transport.ts";

/** One stretch of agent audio: Opus packets in order, counted as the player reads them. */
class PacketStream extends Readable {
  readonly #onRead: () => void;
  constructor(onRead: () => void) {
    // One packet per read() is what the player expects of a raw Opus stream.
    super({ objectMode: true, highWaterMark: 1 << 20 });
    this.#onRead = onRead;
  }
  override _read(): void {
    // Packets are pushed by play() as the TTS makes them; nothing to fetch on demand.
  }
  override read(size?: number): Buffer | null {
    const packet = super.read(size) as Buffer | null;
    // The player destroys a resource's stream it leaves and then reads it once, to end it:
    // that packet is not played.
    if (packet && !this.destroyed) this.#onRead();
    return packet;
  }
}

export interface OpusPlayerOptions {
  /**
   * What the player does while no voice connection is ready to send (a reconnect): `pause` keeps
   * the audio for when it is back (the default); `play` consumes it anyway (tests with no channel).
   */
  whenUnheard?: "pause" | "play";
  /** Called each time a packet was taken for playout, with the cumulative played ms. */
  onPlayed?(playedMs: number): void;
  /** The player failed on a resource (logged by the caller; the stretch is dropped). */
  onError?(err: Error): void;
}

export class OpusPacketPlayer {
  readonly player: AudioPlayer;
  readonly #onPlayed: ((playedMs: number) => void) | undefined;
  #stream: PacketStream | undefined;
  #resource: AudioResource | undefined;
  #queuedPackets = 0;
  #playedPackets = 0;
  #resources = 0;
  #closed = false;

  constructor(options: OpusPlayerOptions = {}) {
    this.#onPlayed = options.onPlayed;
    this.player = createAudioPlayer({
      behaviors: {
        noSubscriber: options.whenUnheard === "play" ? NoSubscriberBehavior.Play : NoSubscriberBehavior.Pause,
      },
    });
    // An AudioPlayer without an error listener would throw from its emitter and take the process down.
    this.player.on("error", (err) => {
      this.#drop();
      options.onError?.(err);
    });
    this.player.on(AudioPlayerStatus.Idle, () => this.#drop());
  }

  /** Queues packets (20 ms each, 48 kHz) after what is queued. */
  play(packets: readonly Uint8Array[]): void {
    if (this.#closed || packets.length === 0) return;
    let stream = this.#stream;
    // A resource that started its silence padding (ran dry, or stopped) takes no more audio.
    if (!stream || !this.#resource || this.#resource.silenceRemaining !== -1) {
      this.#drop();
      stream = new PacketStream(() => this.#read());
      this.#stream = stream;
      this.#resource = createAudioResource(stream, { inputType: StreamType.Opus });
      this.#resources++;
      for (const p of packets) stream.push(asBuffer(p));
      this.#queuedPackets += packets.length;
      this.player.play(this.#resource);
      return;
    }
    for (const p of packets) stream.push(asBuffer(p));
    this.#queuedPackets += packets.length;
  }

  /** Stops at once (no trailing silence) and drops every packet not yet read; returns the ms dropped. */
  clear(): number {
    const dropped = this.#queuedPackets - this.#playedPackets;
    this.#queuedPackets = this.#playedPackets;
    this.#drop();
    this.player.stop(true);
    return dropped * OPUS_PACKET_MS;
  }

  queuedMs(): number {
    return this.#queuedPackets * OPUS_PACKET_MS;
  }

  playedMs(): number {
    return this.#playedPackets * OPUS_PACKET_MS;
  }

  /** Resources created so far (one per stretch of audio the player ran through). */
  get stretches(): number {
    return this.#resources;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.clear();
    this.player.removeAllListeners(AudioPlayerStatus.Idle);
  }

  #read(): void {
    this.#playedPackets++;
    this.#onPlayed?.(this.#playedPackets * OPUS_PACKET_MS);
  }

  /** Forgets the current stretch; its unread packets can no longer be played. */
  #drop(): void {
    const stream = this.#stream;
    this.#stream = undefined;
    this.#resource = undefined;
    if (!stream) return;
    // What the stream still holds will never be heard: take it off the queue.
    this.#queuedPackets = Math.max(this.#playedPackets, this.#queuedPackets - stream.readableLength);
    stream.destroy();
  }
}

function asBuffer(p: Uint8Array): Buffer {
  return Buffer.isBuffer(p) ? p : Buffer.from(p.buffer, p.byteOffset, p.byteLength);
}
