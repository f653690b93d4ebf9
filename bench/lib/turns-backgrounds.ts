// Backgrounds for the noisy turn-taking set: the room behind the caller, synthesized (no
// recording under a free licence can be fetched here) or an operator's own recording
// (turns-recording.ts), and seeded, so every run plays the same samples. Each is made at an
// active level of 0 dB (full scale = 1) and laid under the caller at a stated distance below the
// caller's own speech level (`--noise babble:16,hiss:24`, `--noise ./shop.wav:16,hiss:24`).
import { seededRandom } from "../../test/helpers/noise.ts";
import { CALL_RATE, espeakSynth } from "./turns-cases.ts";
import { fliteSynth } from "./turns-flite.ts";
import { ROOM_TEXTS, ROOM_VOICES } from "./turns-noisy-phrases.ts";
import { loadRecording, recordedRoom } from "./turns-recording.ts";

export const BACKGROUNDS = {
  talker: "one far-off voice reading a paragraph",
  babble: "four voices reading at once",
  cafe: "six voices, cups and plates, a murmur of pink noise",
  street: "traffic: a brown-noise rumble with passing vehicles and engine hum",
  music: "synthesized pop: chords, bass, melody and drums",
  hiss: "white noise",
  pink: "pink noise",
  brown: "brown noise",
} as const;

export type BackgroundKind = keyof typeof BACKGROUNDS;

/** One layer of the room: a synthesized background, or a recording (a file's path). */
export type BackgroundLayer = ({ kind: BackgroundKind } | { kind: "recording"; path: string }) & {
  /** How far below the caller's speech level, dB. */
  belowDb: number;
};

/**
 * `babble:16,hiss:24` → its layers; a KIND that is not a background's name but a file's path
 * (`./shop.wav:16`, any format ffmpeg reads) is that recording, loaded now, so a bad file fails
 * the run before any call. The error names what is wrong.
 */
export async function parseNoise(spec: string): Promise<BackgroundLayer[]> {
  const layers = spec.split(",").map((part): BackgroundLayer => {
    const m = /^(.+):(-?\d+(?:\.\d+)?)$/.exec(part.trim());
    const what = m?.[1] ?? "";
    if (m && what in BACKGROUNDS) return { kind: what as BackgroundKind, belowDb: Number(m[2]) };
    if (m && /[/.]/.test(what)) return { kind: "recording", path: what, belowDb: Number(m[2]) };
    throw new Error(
      `--noise wants KIND:DB[,KIND:DB…] (DB below the caller's speech) with KIND one of ${Object.keys(BACKGROUNDS).join(", ")} or a recording's path (./room.wav); got "${part}"`,
    );
  });
  for (const layer of layers) if (layer.kind === "recording") await loadRecording(layer.path);
  return layers;
}

const FRAME = CALL_RATE / 50;

/**
 * The level of the sound's active part, dBFS: the RMS of its 20 ms frames within 25 dB of its
 * loud frames (the 95th percentile), so a talker's pauses do not lower it and noise counts whole.
 */
export function activeLevelDb(pcm: ArrayLike<number>, fullScale = 32768): number {
  const energies: number[] = [];
  for (let s = 0; s + FRAME <= pcm.length; s += FRAME) {
    let e = 0;
    for (let i = s; i < s + FRAME; i++) e += pcm[i]! * pcm[i]!;
    energies.push(e / FRAME / (fullScale * fullScale));
  }
  if (!energies.length) return Number.NEGATIVE_INFINITY;
  const sorted = [...energies].sort((a, b) => a - b);
  const loud = sorted[Math.floor(0.95 * (sorted.length - 1))]!;
  const floor = Math.max(1e-7, loud * 10 ** (-25 / 10));
  const active = energies.filter((e) => e >= floor);
  const mean = active.reduce((a, b) => a + b, 0) / Math.max(1, active.length);
  return 10 * Math.log10(Math.max(mean, 1e-12));
}

/** `x` scaled to an active level of 0 dB. */
function normalize(x: Float64Array): Float64Array {
  const k = 10 ** (-activeLevelDb(x, 1) / 20);
  for (let i = 0; i < x.length; i++) x[i]! *= k;
  return x;
}

const roomSpeech = new Map<number, Float64Array>();

/** Room voice `i` reading its paragraph, 8 kHz, full scale 1 (synthesized once per process). */
function roomVoice(i: number): Float64Array {
  const k = i % ROOM_VOICES.length;
  let pcm = roomSpeech.get(k);
  if (!pcm) {
    const { synth, voice } = ROOM_VOICES[k]!;
    const text = ROOM_TEXTS[k % ROOM_TEXTS.length]!;
    const raw =
      synth === "flite"
        ? fliteSynth.speak(text, { voice, speed: 1 })
        : espeakSynth.speak(text, { voice, speed: 160 });
    pcm = Float64Array.from(raw, (v) => v / 32768);
    roomSpeech.set(k, pcm);
  }
  return pcm;
}

/** `n` samples of a room voice from a seeded point of its paragraph, read again after a pause. */
function reading(voice: number, n: number, rand: () => number): Float64Array {
  const src = roomVoice(voice);
  const gap = Math.round(0.8 * CALL_RATE);
  const period = src.length + gap;
  const out = new Float64Array(n);
  let at = Math.floor(rand() * period);
  for (let i = 0; i < n; i++, at = (at + 1) % period) out[i] = at < src.length ? src[at]! : 0;
  return out;
}

function voices(count: number, first: number, n: number, rand: () => number): Float64Array {
  const out = new Float64Array(n);
  for (let v = 0; v < count; v++) {
    // Each voice at its own level, within 6 dB of the others.
    const g = 10 ** ((rand() * 6 - 3) / 20);
    const r = reading(first + v, n, rand);
    for (let i = 0; i < n; i++) out[i]! += g * r[i]!;
  }
  return out;
}

function white(n: number, rand: () => number): Float64Array {
  return Float64Array.from({ length: n }, () => rand() * 2 - 1);
}

function pink(n: number, rand: () => number): Float64Array {
  // Paul Kellet's economy filter, as test/helpers/noise.ts.
  let b0 = 0;
  let b1 = 0;
  let b2 = 0;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const w = rand() * 2 - 1;
    b0 = 0.99765 * b0 + w * 0.099046;
    b1 = 0.963 * b1 + w * 0.2965164;
    b2 = 0.57 * b2 + w * 1.0526913;
    out[i] = b0 + b1 + b2 + w * 0.1848;
  }
  return out;
}

function brown(n: number, rand: () => number): Float64Array {
  let y = 0;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    // A leaky integrator: -6 dB/octave above ~10 Hz, no drift.
    y = 0.995 * y + (rand() * 2 - 1) * 0.1;
    out[i] = y;
  }
  return out;
}

/** One-pole low-pass at `hz`, in place. */
function lowPass(x: Float64Array, hz: number): Float64Array {
  const a = Math.exp((-2 * Math.PI * hz) / CALL_RATE);
  let y = 0;
  for (let i = 0; i < x.length; i++) {
    y = (1 - a) * x[i]! + a * y;
    x[i] = y;
  }
  return x;
}

function street(n: number, rand: () => number): Float64Array {
  const out = normalize(brown(n, rand));
  // Vehicles pass every 2–7 s: a low rumble swelling and fading over 2–5 s, and an engine's hum.
  for (let at = Math.floor(rand() * 2 * CALL_RATE); at < n; at += Math.floor((2 + rand() * 5) * CALL_RATE)) {
    const len = Math.floor((2 + rand() * 3) * CALL_RATE);
    const peak = 10 ** ((4 + rand() * 8) / 20);
    const rumble = normalize(lowPass(white(len, rand), 250 + rand() * 400));
    const f0 = 35 + rand() * 50;
    for (let i = 0; i < len && at + i < n; i++) {
      const env = Math.sin((Math.PI * i) / len) ** 2 * peak;
      let hum = 0;
      for (let h = 1; h <= 6; h++) hum += Math.sin((2 * Math.PI * f0 * h * i) / CALL_RATE) / h;
      out[at + i]! += env * (rumble[i]! + 0.4 * hum);
    }
  }
  return out;
}

function cafe(n: number, rand: () => number): Float64Array {
  const out = normalize(voices(6, Math.floor(rand() * ROOM_VOICES.length), n, rand));
  const murmur = normalize(pink(n, rand));
  for (let i = 0; i < n; i++) out[i]! += 0.5 * murmur[i]!;
  // Cups and plates: short ringing clinks every 0.5–3 s.
  for (let at = Math.floor(rand() * CALL_RATE); at < n; at += Math.floor((0.5 + rand() * 2.5) * CALL_RATE)) {
    const f = 1200 + rand() * 2400;
    const amp = 0.5 + rand() * 1.5;
    const len = Math.floor(0.15 * CALL_RATE);
    for (let i = 0; i < len && at + i < n; i++)
      out[at + i]! += amp * Math.exp(-i / (0.03 * CALL_RATE)) * Math.sin((2 * Math.PI * f * i) / CALL_RATE);
  }
  return out;
}

/** Equal-tempered pitch of MIDI note `m`, Hz. */
const hz = (m: number) => 440 * 2 ** ((m - 69) / 12);

/** A tone with a few decaying harmonics (a plucked or struck string's outline). */
function note(out: Float64Array, at: number, len: number, midi: number, amp: number, decay: number): void {
  const f = hz(midi);
  for (let i = 0; i < len && at + i < out.length; i++) {
    const t = i / CALL_RATE;
    const env = Math.min(1, i / 80) * Math.exp(-t / decay);
    let v = 0;
    for (let h = 1; h <= 5 && f * h < CALL_RATE / 2; h++) v += Math.sin(2 * Math.PI * f * h * t) / (h * h);
    out[at + i]! += amp * env * v;
  }
}

function music(n: number, rand: () => number): Float64Array {
  const out = new Float64Array(n);
  const beat = Math.round(((60 / (96 + rand() * 32)) * CALL_RATE) | 0);
  const key = 55 + Math.floor(rand() * 7);
  // I–V–vi–IV, a bar of four beats each.
  const chords = [
    [0, 4, 7],
    [7, 11, 14],
    [9, 12, 16],
    [5, 9, 12],
  ];
  const scale = [0, 2, 4, 7, 9, 12, 14, 16];
  let step = Math.floor(rand() * scale.length);
  const kick = lowPass(white(Math.floor(0.12 * CALL_RATE), rand), 150);
  const snare = white(Math.floor(0.1 * CALL_RATE), rand);
  for (let b = 0, at = 0; at < n; b++, at += beat) {
    const chord = chords[Math.floor(b / 4) % chords.length]!;
    if (b % 4 === 0) for (const iv of chord) note(out, at, 4 * beat, key + iv, 0.25, 1.2);
    if (b % 2 === 0) note(out, at, beat, key - 12 + chord[0]!, 0.5, 0.4);
    step = Math.max(0, Math.min(scale.length - 1, step + Math.floor(rand() * 5) - 2));
    note(out, at, beat, key + 12 + scale[step]!, 0.3, 0.3);
    if (rand() < 0.5) note(out, at + (beat >> 1), beat >> 1, key + 12 + scale[step]!, 0.2, 0.2);
    const drum = b % 2 === 0 ? kick : snare;
    for (let i = 0; i < drum.length && at + i < n; i++)
      out[at + i]! += (b % 2 === 0 ? 3 : 0.6) * drum[i]! * Math.exp(-i / (0.03 * CALL_RATE));
  }
  return out;
}

/** `ms` of the background of `layer` at an active level of 0 dB, from seed `seed`. */
export function background(layer: BackgroundLayer, ms: number, seed: number): Float64Array {
  const n = Math.round((ms * CALL_RATE) / 1000);
  const rand = seededRandom(seed);
  switch (layer.kind) {
    case "recording":
      return normalize(recordedRoom(layer.path, n, rand));
    case "talker":
      return normalize(reading(Math.floor(rand() * ROOM_VOICES.length), n, rand));
    case "babble":
      return normalize(voices(4, Math.floor(rand() * ROOM_VOICES.length), n, rand));
    case "cafe":
      return normalize(cafe(n, rand));
    case "street":
      return normalize(street(n, rand));
    case "music":
      return normalize(music(n, rand));
    case "hiss":
      return normalize(white(n, rand));
    case "pink":
      return normalize(pink(n, rand));
    case "brown":
      return normalize(brown(n, rand));
  }
}

/**
 * `caller` with the layers under it, each `belowDb` under `speechDb` (the caller's speech level,
 * dBFS), for `ms` (the call's length: the room goes on while the agent speaks). Returns the mix and
 * the loudest layer's level, dBFS.
 */
export function underCaller(
  caller: Int16Array,
  speechDb: number,
  layers: readonly BackgroundLayer[],
  ms: number,
  seed: number,
): { pcm: Int16Array; loudestDbfs: number } {
  const n = Math.max(caller.length, Math.round((ms * CALL_RATE) / 1000));
  const mix = new Float64Array(n);
  for (let i = 0; i < caller.length; i++) mix[i] = caller[i]!;
  layers.forEach((layer, k) => {
    const g = 32768 * 10 ** ((speechDb - layer.belowDb) / 20);
    const bed = background(layer, ms, seed * 31 + k);
    for (let i = 0; i < bed.length && i < n; i++) mix[i]! += g * bed[i]!;
  });
  const pcm = Int16Array.from(mix, (v) => Math.max(-32768, Math.min(32767, Math.round(v))));
  return { pcm, loudestDbfs: speechDb - Math.min(...layers.map((l) => l.belowDb)) };
}
