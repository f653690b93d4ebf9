// The negotiated codec's side of RTP: how a payload becomes the session's PCM (G.711 by lookup
// table at 8 kHz, Opus by libopus straight to 16 kHz mono), how a lost packet is concealed, and
// what goes out when the agent is quiet. Decoders reuse one output buffer per call.
import {
  ALAW_SILENCE,
  alawDecode,
  alawEncode,
  MULAW_SILENCE,
  mulawDecode,
  mulawEncode,
} from "../../../codecs/g711.ts";
import { OpusCodec } from "../../../codecs/opus.ts";
import type { SipCodecName } from "../media-port.ts";

/** RTP timestamp units in one 20 ms packet (G.711 at 8 kHz: 160; Opus, always 48 kHz: 960). */
export function ticksPer20ms(codec: SipCodecName): number {
  return codec === "opus" ? 960 : 160;
}

export interface PayloadDecoder {
  readonly inputRate: number;
  /** The payload as PCM at `inputRate` (a view the decoder reuses), or undefined if it does not decode. */
  decode(payload: Uint8Array): Int16Array | undefined;
  /** Stand-in audio for one lost packet, as long as the last one decoded (a reused view). */
  conceal(): Int16Array;
  /** A new stream: nothing to continue from. */
  reset(): void;
}

/**
 * G.711, concealed by repeating the last packet and fading it out over three lost packets
 * (60 ms at 20 ms ptime), then silence: a click-free bridge over a short loss without
 * inventing speech over a long one.
 */
export class G711Decoder implements PayloadDecoder {
  readonly inputRate = 8000;
  readonly #decode: (bytes: Uint8Array, out: Int16Array) => Int16Array;
  #out = new Int16Array(480);
  #last = new Int16Array(480);
  #lastLength = 0;
  #conceal = new Int16Array(480);
  #lossRun = 0;

  constructor(law: "pcmu" | "pcma") {
    this.#decode = law === "pcmu" ? mulawDecode : alawDecode;
  }

  decode(payload: Uint8Array): Int16Array | undefined {
    const n = payload.length;
    if (n === 0) return undefined;
    if (n > this.#out.length) {
      this.#out = new Int16Array(n);
      this.#last = new Int16Array(n);
      this.#conceal = new Int16Array(n);
    }
    const pcm = this.#decode(payload, this.#out);
    this.#last.set(pcm);
    this.#lastLength = n;
    this.#lossRun = 0;
    return pcm;
  }

  conceal(): Int16Array {
    const n = this.#lastLength;
    const out = this.#conceal.subarray(0, n);
    const run = ++this.#lossRun;
    const from = Math.max(0, 1 - (run - 1) / FADE_PACKETS);
    const to = Math.max(0, 1 - run / FADE_PACKETS);
    if (from === 0) return out.fill(0);
    const last = this.#last;
    for (let i = 0; i < n; i++) out[i] = Math.round(last[i]! * (from + ((to - from) * i) / n));
    return out;
  }

  reset(): void {
    this.#lastLength = 0;
    this.#lossRun = 0;
  }
}

const FADE_PACKETS = 3;

const OPUS_DECODED_RATE = 16000;

/** Opus decoded to 16 kHz mono (whatever it was encoded at), concealed by libopus itself. */
export class OpusDecoder implements PayloadDecoder {
  readonly inputRate = OPUS_DECODED_RATE;
  #codec = new OpusCodec(OPUS_DECODED_RATE, 1);
  #lastLength = 0;
  #lossRun = 0;
  #silence = new Int16Array(320);

  decode(payload: Uint8Array): Int16Array | undefined {
    if (payload.length === 0) return undefined;
    let pcm: Int16Array;
    try {
      pcm = this.#codec.decode(payload);
    } catch {
      return undefined;
    }
    this.#lastLength = pcm.length;
    this.#lossRun = 0;
    return pcm;
  }

  /** The first lost packet of a run is libopus's concealment (it fades by itself); later ones silence. */
  conceal(): Int16Array {
    const n = this.#lastLength;
    if (n === 0) return this.#silence.subarray(0, 0);
    if (++this.#lossRun === 1) return this.#codec.conceal(n);
    if (n > this.#silence.length) this.#silence = new Int16Array(n);
    return this.#silence.subarray(0, n);
  }

  reset(): void {
    // A fresh decoder: libopus state belongs to the stream that ended.
    this.#codec = new OpusCodec(OPUS_DECODED_RATE, 1);
    this.#lastLength = 0;
    this.#lossRun = 0;
  }
}

/** The rate a codec's payloads decode to: what the call's `inputRate` is. */
export function decodedRate(codec: SipCodecName): number {
  return codec === "opus" ? OPUS_DECODED_RATE : 8000;
}

export function createDecoder(codec: SipCodecName): PayloadDecoder {
  return codec === "opus" ? new OpusDecoder() : new G711Decoder(codec);
}

/** Encodes a 20 ms frame of 8 kHz PCM into `out` as G.711 of the given law. */
export function g711Encoder(law: "pcmu" | "pcma"): (pcm: Int16Array, out: Uint8Array) => Uint8Array {
  return law === "pcmu" ? mulawEncode : alawEncode;
}

export function g711SilenceByte(law: "pcmu" | "pcma"): number {
  return law === "pcmu" ? MULAW_SILENCE : ALAW_SILENCE;
}

let opusSilence: Uint8Array | undefined;

/** One 20 ms Opus packet of digital silence (48 kHz mono), encoded once per process. */
export function opusSilencePacket(): Uint8Array {
  if (!opusSilence) opusSilence = new OpusCodec(48000, 1).encode(new Int16Array(960)).slice();
  return opusSilence;
}
