// Noise suppression for one stream on WebRTC's audio processing module (Debian's
// libwebrtc-audio-processing, through native/webrtc/ns.cc, built by native/build.sh): a spectral
// suppressor that learns the stream's steady noise (hiss, hum, a fan, an engine) and lowers it.
// It does not remove a voice: telling the caller from a talker behind them is the session's job.
// At 8 kHz it costs about 0.5 ms of CPU per second of audio; nothing is allocated per frame.
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

export const NOISE_SUPPRESSOR_ADDON_PATH = fileURLToPath(
  new URL("../native/build/webrtc-ns.node", import.meta.url),
);

/** Rates the suppressor runs at. */
export const NOISE_SUPPRESSOR_RATES: readonly number[] = [8000, 16000, 32000];

type Handle = { readonly __webrtcNs: unique symbol };

interface NsAddon {
  create(rate: number, level: number): Handle;
  /** In place; whole 10 ms blocks. */
  process(h: Handle, pcm: Int16Array): void;
}

let addon: NsAddon | null | undefined;

/** The addon, or null when it was not built (libwebrtc-audio-processing-dev missing at build time). */
function load(): NsAddon | null {
  if (addon === undefined)
    addon = existsSync(NOISE_SUPPRESSOR_ADDON_PATH)
      ? (createRequire(import.meta.url)(NOISE_SUPPRESSOR_ADDON_PATH) as NsAddon)
      : null;
  return addon;
}

/** Whether noise suppression can run here. */
export function noiseSuppressorAvailable(): boolean {
  return load() !== null;
}

export class NoiseSuppressor {
  readonly rate: number;
  readonly #addon: NsAddon;
  readonly #handle: Handle;
  readonly #block: number;
  /** What cleaned() returns: one buffer per stream. */
  #out = new Int16Array(0);

  /** `level` 0–3: how hard (WebRTC's low, moderate, high, very high); higher distorts speech more. */
  constructor(rate: number, level = 2) {
    const a = load();
    if (!a)
      throw new Error(`noise suppression: ${NOISE_SUPPRESSOR_ADDON_PATH} is not built (run native/build.sh)`);
    if (!NOISE_SUPPRESSOR_RATES.includes(rate))
      throw new RangeError(`noise suppression runs at ${NOISE_SUPPRESSOR_RATES.join(", ")} Hz, not ${rate}`);
    this.rate = rate;
    this.#addon = a;
    this.#handle = a.create(rate, level);
    this.#block = rate / 100;
  }

  /** Whether a frame of `samples` can be processed (whole 10 ms blocks). */
  fits(samples: number): boolean {
    return samples > 0 && samples % this.#block === 0;
  }

  /** Suppresses the noise of `pcm` in place (see fits()). */
  process(pcm: Int16Array): void {
    this.#addon.process(this.#handle, pcm);
  }

  /**
   * `pcm` with its noise suppressed, in this suppressor's own buffer (valid until the next call;
   * `pcm` itself is left as it was), or `pcm` as it is when it is not whole 10 ms blocks.
   */
  cleaned(pcm: Int16Array): Int16Array {
    if (!this.fits(pcm.length)) return pcm;
    if (this.#out.length !== pcm.length) this.#out = new Int16Array(pcm.length);
    this.#out.set(pcm);
    this.#addon.process(this.#handle, this.#out);
    return this.#out;
  }
}
