// A Discord voice channel's conversation as the session sees it (the transport port): every
// member's frames, 16 kHz mono and tagged with who spoke, in; the agent's Opus packets out through
// an OpusPacketSender, its playout counted from the packets sent.
import type { Logger } from "../../src/core/log.ts";
import type { AgentAudio, CallInfo, CallTransport, Speaker, TransportListener } from "../transport.ts";
import { DISCORD_INPUT_RATE } from "./member-receiver.ts";
import { OpusPacketSender, type OpusSenderOptions } from "./opus-sender.ts";

/** Events held for a session that has not attached yet (about 1 s of one member's audio). */
const EARLY_LIMIT = 50;

export interface DiscordTransportOptions {
  info: CallInfo;
  log: Logger;
  /** Leaves the voice channel (hang-up); the conversation then ends through end(). */
  leave(reason: string): Promise<void>;
  sender?: Omit<OpusSenderOptions, "onPlayed">;
}

export class DiscordChannelTransport implements CallTransport {
  readonly info: CallInfo;
  readonly inputRate = DISCORD_INPUT_RATE;
  readonly output = { kind: "opus" } as const;
  readonly player: OpusPacketSender;
  readonly #log: Logger;
  readonly #leave: (reason: string) => Promise<void>;
  #listener: TransportListener | undefined;
  #early: Array<(l: TransportListener) => void> = [];
  #ended = false;
  #clears = 0;
  #inFrames = 0;

  constructor(opts: DiscordTransportOptions) {
    this.info = opts.info;
    this.#log = opts.log;
    this.#leave = opts.leave;
    this.player = new OpusPacketSender({
      ...opts.sender,
      onPlayed: (ms) => this.#listener?.played(ms),
    });
  }

  attach(listener: TransportListener): void {
    if (this.#listener) throw new Error("DiscordChannelTransport: attach() called twice");
    this.#listener = listener;
    const early = this.#early;
    this.#early = [];
    for (const deliver of early) deliver(listener);
  }

  play(audio: AgentAudio): void {
    if (audio instanceof Int16Array)
      throw new TypeError("a Discord channel plays Opus packets (its output is opus), not PCM");
    if (this.#ended) return;
    this.player.play(audio.packets);
  }

  clear(): void {
    if (this.#ended) return;
    const dropped = this.player.clear();
    this.#clears++;
    this.#log.info({ droppedMs: dropped }, "clear: dropped unheard audio");
  }

  queuedMs(): number {
    return this.player.queuedMs();
  }

  playedMs(): number {
    return this.player.playedMs();
  }

  async hangUp(reason: string): Promise<void> {
    if (this.#ended) return;
    this.#log.info({ reason }, "hang-up: leaving the voice channel");
    await this.#leave(reason);
  }

  async transfer(target: string): Promise<void> {
    throw new Error(
      `transfer to ${JSON.stringify(target)}: a Discord voice channel has no phone line to transfer`,
    );
  }

  // ---- inbound, called by the channel's conversation ----

  /** One member's 20 ms frame (the buffer may be reused after this returns). */
  frame(frame: Int16Array, speaker: Speaker): void {
    if (this.#ended) return;
    this.#inFrames++;
    const l = this.#listener;
    if (l) {
      l.audio(frame, speaker);
      return;
    }
    if (this.#early.length >= EARLY_LIMIT) return;
    const copy = frame.slice();
    this.#early.push((x) => x.audio(copy, speaker));
  }

  speakerLeft(speakerId: string): void {
    if (this.#ended) return;
    this.#deliver((l) => l.speakerLeft?.(speakerId));
  }

  /** The conversation is over (left, emptied, lost): once. */
  end(reason: string): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#log.info(
      {
        reason,
        inFrames: this.#inFrames,
        queuedMs: this.player.queuedMs(),
        playedMs: this.player.playedMs(),
        clears: this.#clears,
        stretches: this.player.stretches,
        heldMs: this.player.heldTicks * 20,
      },
      "conversation ended",
    );
    this.player.close();
    this.#deliver((l) => l.ended(reason));
  }

  get ended(): boolean {
    return this.#ended;
  }

  #deliver(event: (l: TransportListener) => void): void {
    if (this.#listener) event(this.#listener);
    else this.#early.push(event);
  }
}
