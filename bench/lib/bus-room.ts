// A bus's engine going by again and again, for bench/rooms.sh: an engine's harmonics as loud as a
// voice and in a voice's range of pitch, which the detector takes for speech now and then (a bus
// made with sox's sweeps never was; the notes' 2026-12-07 "Asked again"). Each passage is 2.5–4 s,
// 2.5–5 s after the last: eleven harmonics of 55–95 Hz gliding 8 % down, a subharmonic, and a
// rumble (brown noise, high-passed), swelling and fading; the same file on every machine (seeded).
//   node bench/lib/bus-room.ts OUT.wav [SECONDS]   (16 kHz mono, peaks at -3 dBFS)
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { encodeWav } from "../../codecs/wav.ts";
import { seededRandom } from "../../test/helpers/noise.ts";
import { usageOfFile } from "./usage.ts";

const RATE = 16000;
const HARMONICS = 11;

/** `seconds` of buses going by, as 16-bit samples at RATE. */
export function busRoom(seconds: number, seed = 55): Int16Array {
  const rand = seededRandom(seed);
  const out = new Float64Array(Math.round(seconds * RATE));
  let at = Math.round((0.5 + rand()) * RATE);
  let brown = 0;
  let lastBrown = 0;
  let highPassed = 0;
  while (at < out.length) {
    const n = Math.round((2.5 + rand() * 1.5) * RATE);
    const f0 = 55 + rand() * 40;
    // Its own mix of harmonics: an engine's timbre differs from bus to bus.
    const gains = Array.from({ length: HARMONICS }, (_, k) => (0.5 + rand()) / (k + 1));
    let phase = 0;
    for (let i = 0; i < n && at + i < out.length; i++) {
      const t = i / n;
      const f = f0 * (1 - 0.08 * t);
      phase += (2 * Math.PI * f) / RATE;
      let s = 0.35 * Math.sin(phase / 2);
      for (let k = 0; k < HARMONICS; k++) s += gains[k]! * Math.sin((k + 1) * phase);
      // Brown noise, its lowest octaves taken out (a first-order high-pass near 100 Hz).
      brown = 0.998 * brown + (rand() * 2 - 1) * 0.05;
      highPassed = 0.96 * (highPassed + brown - lastBrown);
      lastBrown = brown;
      const swell = Math.sin(Math.PI * t) ** 2;
      out[at + i]! += swell * (s + 4 * highPassed);
    }
    at += n + Math.round((2.5 + rand() * 2.5) * RATE);
  }
  let peak = 0;
  for (const v of out) peak = Math.max(peak, Math.abs(v));
  const scale = peak > 0 ? (32767 * 10 ** (-3 / 20)) / peak : 0;
  return Int16Array.from(out, (v) => Math.round(v * scale));
}

// Run as a script (import.meta.main is Node 24's only).
if (process.argv[1] !== undefined && resolve(process.argv[1]) === import.meta.filename) {
  const [file, seconds = "60"] = process.argv.slice(2);
  if (!file || file === "--help") {
    process.stdout.write(`${usageOfFile(import.meta.filename)}\n`);
    process.exit(file ? 0 : 2);
  }
  const s = Number(seconds);
  if (!(s > 0)) throw new Error(`SECONDS: ${seconds} is not a positive number of seconds`);
  writeFileSync(file, encodeWav(busRoom(s), RATE));
}
