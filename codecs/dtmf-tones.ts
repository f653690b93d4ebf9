// Keypad digits as in-band tones (ITU-T Q.23 frequency pairs), for transports whose protocol
// carries no digits out of band (Twilio Media Streams, AudioSocket): the far end's own detector
// hears them in the call's audio. Levels and timing follow Q.24's common limits: the high group
// at −7 dBm0 and the low group 2 dB under it (a small "twist", as telephones send), each tone
// ≥ 65 ms and the pause between two ≥ 65 ms. Pure code, no I/O.

/** Low-group (row) and high-group (column) frequencies, Hz. */
export const DTMF_LOW_HZ = [697, 770, 852, 941] as const;
export const DTMF_HIGH_HZ = [1209, 1336, 1477, 1633] as const;

/** The keypad, row by row: a digit's row picks its low tone, its column its high one. */
export const DTMF_KEYPAD = ["123A", "456B", "789C", "*0#D"] as const;

/** Level of each group, dBm0. */
export const DTMF_HIGH_DBM0 = -7;
export const DTMF_LOW_DBM0 = -9;

/**
 * Peak amplitude of a 0 dBm0 sine in 16-bit linear PCM: G.711's full-scale sine is +3.17 dBm0
 * (G.711 §A, the digital milliwatt), and G.711 maps full scale onto ±32,767 here.
 */
const PEAK_0_DBM0 = 32767 * 10 ** (-3.17 / 20);

/** Q.24's minimum tone and pause are 40 ms; 65 ms is what most receivers are sure of. */
export const DTMF_MIN_MS = 65;

export interface DtmfTiming {
  /** How long each tone sounds, ms (default 100, at least 65). */
  readonly toneMs?: number;
  /** Silence after each tone, ms (default 100, at least 65). */
  readonly gapMs?: number;
  /** What a `w` in the digits waits, ms (default 500). */
  readonly waitMs?: number;
}

export const DEFAULT_DTMF_TONE_MS = 100;
export const DEFAULT_DTMF_GAP_MS = 100;
export const DTMF_WAIT_MS = 500;

/** The two frequencies of a keypad digit (0-9, *, #, A-D); undefined for anything else. */
export function dtmfPair(digit: string): { low: number; high: number } | undefined {
  if (digit.length !== 1) return undefined;
  const d = digit.toUpperCase();
  for (let row = 0; row < DTMF_KEYPAD.length; row++) {
    const col = DTMF_KEYPAD[row]!.indexOf(d);
    if (col >= 0) return { low: DTMF_LOW_HZ[row]!, high: DTMF_HIGH_HZ[col]! };
  }
  return undefined;
}

/** Ramp at each end of a tone, ms: a tone switched on at full level clicks and splatters. */
const RAMP_MS = 2;

/** Writes one digit's tone into `out` from `at`, `samples` long. */
function writeTone(out: Int16Array, at: number, samples: number, digit: string, rate: number): void {
  const pair = dtmfPair(digit);
  if (!pair) throw new RangeError(`not a DTMF digit: ${JSON.stringify(digit)}`);
  const aLow = PEAK_0_DBM0 * 10 ** (DTMF_LOW_DBM0 / 20);
  const aHigh = PEAK_0_DBM0 * 10 ** (DTMF_HIGH_DBM0 / 20);
  const wLow = (2 * Math.PI * pair.low) / rate;
  const wHigh = (2 * Math.PI * pair.high) / rate;
  const ramp = Math.max(1, Math.round((RAMP_MS * rate) / 1000));
  for (let i = 0; i < samples; i++) {
    const edge = Math.min(i, samples - 1 - i);
    const gain = edge >= ramp ? 1 : 0.5 - 0.5 * Math.cos((Math.PI * edge) / ramp);
    out[at + i] = Math.round(gain * (aLow * Math.sin(wLow * i) + aHigh * Math.sin(wHigh * i)));
  }
}

function timing(t: DtmfTiming): { toneMs: number; gapMs: number; waitMs: number } {
  const toneMs = t.toneMs ?? DEFAULT_DTMF_TONE_MS;
  const gapMs = t.gapMs ?? DEFAULT_DTMF_GAP_MS;
  if (!(toneMs >= DTMF_MIN_MS) || !(gapMs >= DTMF_MIN_MS))
    throw new RangeError(`DTMF tones and gaps last at least ${DTMF_MIN_MS} ms (got ${toneMs} and ${gapMs})`);
  return { toneMs, gapMs, waitMs: t.waitMs ?? DTMF_WAIT_MS };
}

/**
 * The PCM of a run of digits at `rate`: each digit's tone then its gap, a `w` as a wait of silence.
 * Throws a RangeError on a character that is neither.
 */
export function dtmfTones(digits: string, rate: number, t: DtmfTiming = {}): Int16Array {
  const { toneMs, gapMs, waitMs } = timing(t);
  const tone = Math.round((toneMs * rate) / 1000);
  const gap = Math.round((gapMs * rate) / 1000);
  const wait = Math.round((waitMs * rate) / 1000);
  let total = 0;
  for (const c of digits) total += c === "w" || c === "W" ? wait : tone + gap;
  const out = new Int16Array(total);
  let at = 0;
  for (const c of digits) {
    if (c === "w" || c === "W") {
      at += wait;
      continue;
    }
    writeTone(out, at, tone, c, rate);
    at += tone + gap;
  }
  return out;
}
