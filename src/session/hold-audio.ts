// What the caller hears while a warm transfer rings and the person is briefed: a loop (the
// operator's WAV file, or a soft tone every two seconds) kept a little ahead of the playout, so the
// line never goes silent (a caller who hears nothing thinks the call dropped) and stopping it drops
// at most that much.
import { readFile } from "node:fs/promises";
import { stereoToMono } from "../../codecs/pcm.ts";
import { resample } from "../../codecs/resample.ts";
import { parseWav } from "../../codecs/wav.ts";
import type { Clock, TimerHandle } from "../core/clock.ts";
import type { CallTransport } from "./transport.ts";

/** Audio queued ahead of what the caller has heard: enough to ride out a late timer, ms. */
const AHEAD_MS = 300;
/** How often the queue is topped up, ms. */
const TICK_MS = 100;
/** Pieces of the loop handed to the transport, ms (whole 20 ms frames). */
const PIECE_MS = 100;

/** The default hold loop at `rate`: 440 Hz for 0.4 s (soft edges), then 1.6 s of silence, at about −20 dBFS. */
export function holdTone(rate: number): Int16Array {
  const loop = new Int16Array(rate * 2);
  const on = Math.round(rate * 0.4);
  const fade = Math.round(rate * 0.02);
  const amp = 3300;
  for (let i = 0; i < on; i++) {
    const edge = Math.min(1, i / fade, (on - 1 - i) / fade);
    loop[i] = Math.round(amp * edge * Math.sin((2 * Math.PI * 440 * i) / rate));
  }
  return loop;
}

/** The operator's hold file (a PCM WAV, any rate, mono or stereo) as mono at `rate`. */
export async function holdAudioFile(path: string, rate: number): Promise<Int16Array> {
  const wav = parseWav(new Uint8Array(await readFile(path)));
  if (wav.format !== "pcm" || wav.bitsPerSample !== 16)
    throw new Error(
      `transferHoldAudio ${path}: expected 16-bit PCM WAV, got ${wav.bitsPerSample}-bit ${wav.format}`,
    );
  const mono = wav.channels === 2 ? stereoToMono(wav.samples) : wav.samples;
  const loop = wav.sampleRate === rate ? mono : resample(mono, wav.sampleRate, rate);
  if (loop.length < rate / 10) throw new Error(`transferHoldAudio ${path}: shorter than 100 ms`);
  return loop;
}

export class HoldAudio {
  readonly #transport: CallTransport;
  readonly #clock: Clock;
  readonly #loop: Int16Array;
  readonly #piece: number;
  #at = 0;
  #timer: TimerHandle | undefined;
  #playing = false;

  /** `loop` is mono PCM at the transport's output rate. */
  constructor(transport: CallTransport, clock: Clock, loop: Int16Array, rate: number) {
    this.#transport = transport;
    this.#clock = clock;
    this.#loop = loop;
    this.#piece = Math.round((rate * PIECE_MS) / 1000);
  }

  get playing(): boolean {
    return this.#playing;
  }

  start(): void {
    if (this.#playing) return;
    this.#playing = true;
    this.#tick();
  }

  /** Stops the loop and drops what is queued of it. */
  stop(): void {
    if (!this.#playing) return;
    this.#playing = false;
    this.#clock.clearTimeout(this.#timer);
    this.#transport.clear();
  }

  #tick(): void {
    const t = this.#transport;
    // Bounded: a transport that has ended queues nothing, and must not hold the loop here.
    for (let n = 0; n <= AHEAD_MS / PIECE_MS && t.queuedMs() - t.playedMs() < AHEAD_MS; n++)
      t.play(this.#next());
    this.#timer = this.#clock.setTimeout(() => this.#tick(), TICK_MS);
  }

  #next(): Int16Array {
    const out = new Int16Array(this.#piece);
    for (let i = 0; i < out.length; i++) {
      out[i] = this.#loop[this.#at]!;
      this.#at = (this.#at + 1) % this.#loop.length;
    }
    return out;
  }
}
