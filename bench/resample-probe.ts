// Probe of the two telephony hot paths, in CPU µs per second of audio (lower is better):
//   (a) inbound:  µ-law 8 kHz → PCM → 16 kHz → 20 ms frames
//   (b) outbound: 24 kHz PCM (TTS) → 8 kHz → 20 ms frames → µ-law
// Prints one JSON line. Usage: node bench/resample-probe.ts [seconds of audio per trial]
import { mulawDecode, mulawEncode } from "../codecs/g711.ts";
import { Framer } from "../codecs/pcm.ts";
import { Resampler } from "../codecs/resample.ts";

const seconds = Number(process.argv[2] ?? 60);

function speechLike(rate: number, n: number): Int16Array {
  // Noise-modulated harmonics: representative values, no denormals or all-zero shortcuts.
  const out = new Int16Array(n);
  let seed = 1;
  for (let i = 0; i < n; i++) {
    seed = (seed * 1664525 + 1013904223) >>> 0;
    const t = i / rate;
    const v = 6000 * Math.sin(2 * Math.PI * 180 * t) + 3000 * Math.sin(2 * Math.PI * 1270 * t);
    out[i] = Math.round(v * (0.6 + 0.4 * Math.sin(2 * Math.PI * 3 * t)) + ((seed >>> 16) % 200) - 100);
  }
  return out;
}

function cpuMicros(fn: () => void): number {
  const t0 = process.cpuUsage();
  fn();
  const d = process.cpuUsage(t0);
  return d.user + d.system;
}

function inbound(): number {
  const frameIn = 160;
  const mulaw = mulawEncode(speechLike(8000, 8000 * seconds));
  const pcm8 = new Int16Array(frameIn); // reused per call
  const up = new Resampler(8000, 16000);
  const framer = new Framer(320);
  let frames = 0;
  const us = cpuMicros(() => {
    for (let off = 0; off < mulaw.length; off += frameIn) {
      mulawDecode(mulaw.subarray(off, off + frameIn), pcm8);
      frames += framer.push(up.push(pcm8)).length;
    }
  });
  if (frames < 50 * seconds - 2) throw new Error(`inbound produced ${frames} frames`);
  return us / seconds;
}

function outbound(chunkMs: number): number {
  const chunk = (24000 * chunkMs) / 1000;
  const pcm24 = speechLike(24000, 24000 * seconds);
  const down = new Resampler(24000, 8000);
  const framer = new Framer(160);
  const ulaw = new Uint8Array(160); // reused per call
  let frames = 0;
  let check = 0;
  const us = cpuMicros(() => {
    for (let off = 0; off < pcm24.length; off += chunk) {
      for (const f of framer.push(down.push(pcm24.subarray(off, off + chunk)))) {
        mulawEncode(f, ulaw);
        check ^= ulaw[0]!;
        frames++;
      }
    }
  });
  if (frames < 50 * seconds - 2) throw new Error(`outbound produced ${frames} frames (${check})`);
  return us / seconds;
}

/** Resampling alone, 20 ms chunks, for the other pairs the product uses (informational). */
function pair(from: number, to: number): number {
  const input = speechLike(from, from * seconds);
  const r = new Resampler(from, to);
  const chunk = from / 50;
  const out = new Int16Array(Math.ceil((chunk * to) / from) + 1);
  const us = cpuMicros(() => {
    for (let off = 0; off < input.length; off += chunk) r.pushInto(input.subarray(off, off + chunk), out);
  });
  return us / seconds;
}

// Warm up the JIT, then keep the best of several trials (least disturbed by other processes).
const best = (fn: () => number) => {
  let b = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 7; i++) b = Math.min(b, fn());
  return Math.round(b * 10) / 10;
};
const a = best(inbound);
const b20 = best(() => outbound(20));
const b100 = best(() => outbound(100));
const pairs = Object.fromEntries(
  [
    [16000, 8000],
    [8000, 24000],
    [48000, 16000],
    [16000, 48000],
    [22050, 8000],
    [22050, 24000],
    [22050, 48000],
  ].map(([f, t]) => [`${f / 1000}k_to_${t / 1000}k`, best(() => pair(f!, t!))]),
);
console.log(
  JSON.stringify({
    bench: "resample-probe",
    unit: "cpu_us_per_audio_s",
    a_inbound_8k_to_16k: a,
    b_outbound_24k_to_8k_20ms: b20,
    b_outbound_24k_to_8k_100ms: b100,
    resample_only: pairs,
  }),
);
