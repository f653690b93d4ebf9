// Keypad digits heard in PCM (in-band DTMF): Goertzel filters at the eight Q.23 frequencies over
// blocks of 25.6 ms (205 samples at 8 kHz, bins narrow enough to tell 697 from 770 Hz), a block
// every 12.8 ms. A block holds a digit when one row and one column tone carry most of its energy
// (speech and music spread theirs), each stands well above the rest of its group, and neither
// drowns the other (twist). A press is reported once, on its second block in a row, and over when
// two blocks in a row hold none: a 65 ms tone and a 65 ms pause are each enough. Pure code, no I/O.
import { DTMF_HIGH_HZ, DTMF_KEYPAD, DTMF_LOW_HZ } from "./dtmf-tones.ts";

/** Share of a block's energy the two tones must hold (a clean pair ≈ 1, speech far below). */
const MIN_SHARE = 0.6;
/** How far a group's strongest tone must stand above the group's next one (power ratio, 6 dB). */
const MIN_GROUP_RATIO = 4;
/** Largest level difference between the two tones (power ratio, 8 dB either way). */
const MAX_TWIST = 10 ** 0.8;
/** Quietest block that may hold a digit, RMS in Int16 units (about −48 dBFS). */
const MIN_RMS = 130;

export class DtmfToneDetector {
  readonly #n: number;
  readonly #hop: number;
  readonly #coefs: Float64Array;
  readonly #block: Float64Array;
  /** Each tone's power in the block being analysed (reused: the simulator runs it on every frame). */
  readonly #power = new Float64Array(8);
  #fill = 0;
  #candidate = "";
  #hits = 0;
  #misses = 0;
  /** The digit being pressed now (reported), "" when none. */
  #down = "";

  constructor(sampleRate: number) {
    this.#n = Math.round((205 * sampleRate) / 8000);
    this.#hop = Math.floor(this.#n / 2);
    this.#block = new Float64Array(this.#n);
    this.#coefs = Float64Array.from(
      [...DTMF_LOW_HZ, ...DTMF_HIGH_HZ],
      (hz) => 2 * Math.cos((2 * Math.PI * hz) / sampleRate),
    );
  }

  /** Feeds samples (any length); the digits whose press began in them, in order. */
  push(samples: Int16Array): string[] {
    const found: string[] = [];
    for (let i = 0; i < samples.length; i++) {
      this.#block[this.#fill++] = samples[i]!;
      if (this.#fill < this.#n) continue;
      const digit = this.#analyse();
      const pressed = this.#follow(digit);
      if (pressed) found.push(pressed);
      this.#block.copyWithin(0, this.#hop);
      this.#fill = this.#n - this.#hop;
    }
    return found;
  }

  /** The digit one block holds, "" for none. */
  #analyse(): string {
    const n = this.#n;
    const x = this.#block;
    let energy = 0;
    for (let i = 0; i < n; i++) energy += x[i]! * x[i]!;
    if (Math.sqrt(energy / n) < MIN_RMS) return "";
    const power = this.#power;
    for (let k = 0; k < 8; k++) {
      const c = this.#coefs[k]!;
      let s1 = 0;
      let s2 = 0;
      for (let i = 0; i < n; i++) {
        const s0 = x[i]! + c * s1 - s2;
        s2 = s1;
        s1 = s0;
      }
      power[k] = s1 * s1 + s2 * s2 - c * s1 * s2;
    }
    const row = strongest(power, 0);
    const col = strongest(power, 4);
    if (row < 0 || col < 0) return "";
    const low = power[row]!;
    const high = power[col]!;
    // A sinusoid of amplitude A over n samples: power ≈ (A·n/2)², energy A²·n/2; so ≈ 1 for a clean pair.
    if ((2 * (low + high)) / (n * energy) < MIN_SHARE) return "";
    if (high / low > MAX_TWIST || low / high > MAX_TWIST) return "";
    return DTMF_KEYPAD[row]![col - 4]!;
  }

  /** Two blocks in a row make a press; two without end it. */
  #follow(digit: string): string | undefined {
    if (digit === "") {
      this.#candidate = "";
      this.#hits = 0;
      if (++this.#misses >= 2) this.#down = "";
      return undefined;
    }
    this.#misses = 0;
    if (digit !== this.#candidate) {
      this.#candidate = digit;
      this.#hits = 1;
      return undefined;
    }
    if (++this.#hits < 2 || digit === this.#down) return undefined;
    this.#down = digit;
    return digit;
  }
}

/** Index of the group's (4 filters from `from`) strongest filter, or −1 when it does not stand out. */
function strongest(power: Float64Array, from: number): number {
  let best = from;
  for (let k = from + 1; k < from + 4; k++) if (power[k]! > power[best]!) best = k;
  for (let k = from; k < from + 4; k++)
    if (k !== best && power[k]! * MIN_GROUP_RATIO > power[best]!) return -1;
  return best;
}

/** Every digit pressed in a whole recording (tests, the call simulator). */
export function detectDtmf(pcm: Int16Array, sampleRate: number): string {
  return new DtmfToneDetector(sampleRate).push(pcm).join("");
}
