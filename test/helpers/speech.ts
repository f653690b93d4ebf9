// Real speech for tests: espeak-ng speaks, sox resamples, and scenes place utterances between silences
// of known length (optionally under seeded background noise), so tests know the true speech boundaries.
import { spawnSync } from "node:child_process";
import { concatPcm } from "../../codecs/pcm.ts";
import { type NoiseOptions, noise } from "./noise.ts";

export interface SpeechOptions {
  /** Output sample rate (sox resamples espeak-ng's 22050 Hz). Default 16000. */
  rate?: number;
  /** espeak-ng voice. Default "en-us". */
  voice?: string;
  /** Speaking rate in words per minute. Default 160. */
  wpm?: number;
  pitch?: number;
  /** Cut espeak-ng's leading/trailing silence (by level) so the audio starts and ends with speech. Default true. */
  trim?: boolean;
  /** Gain in dB applied after synthesis (espeak-ng speaks at about -21 dBFS RMS). */
  gainDb?: number;
}

function tool(cmd: string, args: string[], input: Uint8Array | string): Buffer {
  const r = spawnSync(cmd, args, { input, maxBuffer: 256 << 20 });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`${cmd} exited ${r.status}: ${r.stderr.toString()}`);
  return r.stdout;
}

const cache = new Map<string, Int16Array>();

/** Speaks `text` with espeak-ng and returns mono 16-bit PCM at `options.rate`. */
export function speak(text: string, options: SpeechOptions = {}): Int16Array {
  const rate = options.rate ?? 16000;
  const key = JSON.stringify([text, options]);
  const hit = cache.get(key);
  if (hit) return hit.slice();
  const args = ["--stdout", "-v", options.voice ?? "en-us", "-s", String(options.wpm ?? 160)];
  if (options.pitch !== undefined) args.push("-p", String(options.pitch));
  // Text on stdin so that text starting with "-" is never taken for an option.
  const wav = tool("espeak-ng", args, text);
  const raw = tool(
    "sox",
    [
      ...["-V1", "-R", "--ignore-length", "-t", "wav", "-"],
      ...["-t", "raw", "-e", "signed", "-b", "16", "-c", "1", "-r", String(rate), "-"],
      ...(options.gainDb ? ["gain", String(options.gainDb)] : []),
    ],
    wav,
  );
  const pcm = new Int16Array(raw.byteLength >> 1);
  new Uint8Array(pcm.buffer).set(raw.subarray(0, pcm.byteLength));
  const out = options.trim === false ? pcm : trimSilence(pcm, rate);
  cache.set(key, out);
  return out.slice();
}

/**
 * Cuts leading and trailing audio quieter than `thresholdDbfs` (RMS over 5 ms frames). The first and last
 * loud frames are kept whole, so the result starts within 5 ms of the first audible sound.
 */
export function trimSilence(pcm: Int16Array, rate: number, thresholdDbfs = -50): Int16Array {
  const frame = Math.max(1, Math.round(rate / 200));
  const loud = loudFrame(pcm, rate, thresholdDbfs);
  const first = firstLoudSample(pcm, rate, thresholdDbfs);
  if (first < 0) return new Int16Array(0);
  let last = first;
  for (let s = Math.floor((pcm.length - 1) / frame) * frame; s > first; s -= frame) {
    if (loud(s)) {
      last = s;
      break;
    }
  }
  return pcm.slice(first, Math.min(pcm.length, last + frame));
}

function loudFrame(pcm: Int16Array, rate: number, thresholdDbfs: number): (start: number) => boolean {
  const frame = Math.max(1, Math.round(rate / 200));
  const limit = (32768 * 10 ** (thresholdDbfs / 20)) ** 2;
  return (start) => {
    const end = Math.min(pcm.length, start + frame);
    let sum = 0;
    for (let i = start; i < end; i++) sum += pcm[i]! * pcm[i]!;
    return sum / (end - start) > limit;
  };
}

/**
 * How long the PCM is louder than `thresholdDbfs`, ms: samples whose 5 ms RMS around them is over
 * it. A sliding window, so the figure does not depend on where the audio starts; the pauses
 * between words and sentences do not count, only the sounding speech.
 */
export function loudMs(pcm: Int16Array, rate: number, thresholdDbfs = -40): number {
  const half = Math.max(1, Math.round(rate / 400));
  const limit = (32768 * 10 ** (thresholdDbfs / 20)) ** 2;
  let sum = 0;
  let loud = 0;
  for (let i = -half; i < pcm.length + half; i++) {
    const enter = i + half;
    const leave = i - half - 1;
    if (enter < pcm.length) sum += pcm[enter]! * pcm[enter]!;
    if (leave >= 0) sum -= pcm[leave]! * pcm[leave]!;
    if (i >= 0 && i < pcm.length && sum / (2 * half + 1) > limit) loud++;
  }
  return (loud / rate) * 1000;
}

/** Where trimSilence() starts the audio: the first sample of its first loud 5 ms frame, or -1. */
export function firstLoudSample(pcm: Int16Array, rate: number, thresholdDbfs = -50): number {
  const frame = Math.max(1, Math.round(rate / 200));
  const loud = loudFrame(pcm, rate, thresholdDbfs);
  for (let s = 0; s < pcm.length; s += frame) if (loud(s)) return s;
  return -1;
}

/** When the PCM first gets louder than `thresholdDbfs` (-40: speech, not line noise), in ms; undefined if never. */
export function firstLoudMs(pcm: Int16Array, rate: number, thresholdDbfs = -40): number | undefined {
  const at = firstLoudSample(pcm, rate, thresholdDbfs);
  return at < 0 ? undefined : (at / rate) * 1000;
}

export function silence(ms: number, rate: number): Int16Array {
  return new Int16Array(Math.round((ms * rate) / 1000));
}

/** Adds `overlay` onto `base` (from `offset`), saturating at the Int16 limits. Returns a new array. */
export function mixPcm(base: Int16Array, overlay: Int16Array, offset = 0): Int16Array {
  const out = base.slice();
  const end = Math.min(out.length, offset + overlay.length);
  for (let i = Math.max(0, offset); i < end; i++) {
    out[i] = Math.max(-32768, Math.min(32767, out[i]! + overlay[i - offset]!));
  }
  return out;
}

export type ScenePart =
  | { silenceMs: number }
  | { say: string; options?: Omit<SpeechOptions, "rate"> }
  | { pcm: Int16Array; label?: string };

export interface SceneSpeech {
  /** The spoken text (or the label of a raw PCM part). */
  text: string;
  startMs: number;
  endMs: number;
  startSample: number;
  endSample: number;
}

export interface Scene {
  pcm: Int16Array;
  rate: number;
  durationMs: number;
  /** Where each utterance truly starts and ends (after trimming espeak-ng's own silence). */
  speech: SceneSpeech[];
}

export interface SceneOptions {
  rate?: number;
  /** Background noise mixed over the whole scene, silences and speech alike. */
  noise?: NoiseOptions;
}

/** Lays parts end to end: `{ silenceMs }` gaps, `{ say }` utterances, `{ pcm }` raw audio. */
export function buildScene(parts: ScenePart[], options: SceneOptions = {}): Scene {
  const rate = options.rate ?? 16000;
  const chunks: Int16Array[] = [];
  const speech: SceneSpeech[] = [];
  let at = 0;
  for (const part of parts) {
    let chunk: Int16Array;
    if ("silenceMs" in part) {
      chunk = silence(part.silenceMs, rate);
    } else {
      chunk = "say" in part ? speak(part.say, { ...part.options, rate }) : part.pcm;
      const text = "say" in part ? part.say : (part.label ?? "pcm");
      speech.push({
        text,
        startSample: at,
        endSample: at + chunk.length,
        startMs: (at * 1000) / rate,
        endMs: ((at + chunk.length) * 1000) / rate,
      });
    }
    chunks.push(chunk);
    at += chunk.length;
  }
  let pcm = concatPcm(chunks);
  if (options.noise) pcm = mixPcm(pcm, noise((pcm.length * 1000) / rate, rate, options.noise));
  return { pcm, rate, durationMs: (pcm.length * 1000) / rate, speech };
}
