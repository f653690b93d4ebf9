// One member's voice, on its own: the Opus packets Discord relays for them (48 kHz stereo) decoded
// straight to 16 kHz mono by libopus (it resamples and downmixes itself), cut into the 20 ms frames
// the session listens to, tagged with who spoke. One decoder per member, kept for the conversation;
// packets come from the connection's receive router (receive-router.ts).
import { OpusCodec } from "../../codecs/opus.ts";
import { Framer } from "../../codecs/pcm.ts";
import type { Speaker } from "../transport.ts";

export const DISCORD_INPUT_RATE = 16000;
const FRAME_SAMPLES = DISCORD_INPUT_RATE / 50;

export interface MemberReceiverOptions {
  speaker: Speaker;
  /** A 20 ms mono frame at 16 kHz; the buffer is reused, so use it before returning. */
  onFrame(frame: Int16Array, speaker: Speaker): void;
  /** A packet libopus could not decode (counted, logged by the caller now and then). */
  onBadPacket?(err: Error): void;
}

export class MemberReceiver {
  speaker: Speaker;
  readonly #codec = new OpusCodec(DISCORD_INPUT_RATE, 1);
  readonly #framer = new Framer(FRAME_SAMPLES);
  readonly #opts: MemberReceiverOptions;
  readonly #onFrame = (frame: Int16Array) => {
    this.frames++;
    this.#opts.onFrame(frame, this.speaker);
  };
  frames = 0;
  badPackets = 0;

  constructor(opts: MemberReceiverOptions) {
    this.speaker = opts.speaker;
    this.#opts = opts;
  }

  /** Decodes one Opus packet and delivers each whole 20 ms frame it completes. */
  push(packet: Uint8Array): void {
    if (packet.length === 0) return;
    let pcm: Int16Array;
    try {
      pcm = this.#codec.decode(packet);
    } catch (err) {
      this.badPackets++;
      this.#opts.onBadPacket?.(err as Error);
      return;
    }
    this.#framer.cut(pcm, this.#onFrame);
  }

  /** Drops a partly filled frame (the member left, or the conversation ended). */
  stop(): void {
    this.#framer.reset();
  }
}
