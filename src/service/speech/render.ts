// Text to PCM at the requested rate and volume: the engine's stream is resampled in-process chunk by
// chunk and scaled, so the first audio leaves as soon as the engine produced its first chunk.
import { applyGain } from "../../../codecs/pcm.ts";
import { Resampler } from "../../../codecs/resample.ts";
import type { TtsEngine } from "../engines/tts/engine.ts";
import type { EngineVoice } from "../engines/tts/voices.ts";

export interface RenderOptions {
  voice: EngineVoice;
  /** The service's voice id, for engines with voices of their own (an upstream server). */
  voiceId?: string;
  /** Global guidance for engines that take it (an upstream server). */
  instruction?: string;
  /** 0.5 to 2.0. */
  speed: number;
  /** Linear gain, 0.1 to 2.0. */
  volume: number;
  sampleRate: number;
}

const CJK = /[\u3400-\u9fff\uf900-\ufaff]/g;

/** The engine voice for this text: an English voice hands mostly-Chinese text to Mandarin. */
export function voiceFor(voice: EngineVoice, text: string): EngineVoice {
  if (voice.language === "zh") return voice;
  const cjk = text.match(CJK)?.length ?? 0;
  if (cjk === 0 || cjk * 2 < text.replace(/\s/g, "").length) return voice;
  const variant = voice.espeak.includes("+") ? voice.espeak.slice(voice.espeak.indexOf("+")) : "";
  return { ...voice, espeak: `cmn${variant}`, language: "zh" };
}

/** Synthesizes one text, delivering PCM at opts.sampleRate as it is produced. */
export async function renderSpeech(
  engine: TtsEngine,
  text: string,
  opts: RenderOptions,
  onPcm: (pcm: Int16Array) => void,
  signal?: AbortSignal,
): Promise<void> {
  const rs = new Resampler(engine.sampleRate, opts.sampleRate);
  const out = (pcm: Int16Array) => {
    if (pcm.length === 0) return;
    onPcm(opts.volume === 1 ? pcm : applyGain(pcm, opts.volume, pcm));
  };
  const req = {
    text,
    voice: voiceFor(opts.voice, text),
    speed: opts.speed,
    ...(opts.voiceId ? { voiceId: opts.voiceId } : {}),
    ...(opts.instruction ? { instruction: opts.instruction } : {}),
  };
  await engine.synthesize(req, (chunk) => out(rs.push(chunk)), signal);
  out(rs.flush());
}

/** A synthesis started ahead of its turn: its PCM waits until attach() takes it (then flows live). */
export interface PrefetchedSpeech {
  /** Delivers what was produced so far, then the rest as it comes; resolves when the text is done. */
  attach(onPcm: (pcm: Int16Array) => void): Promise<void>;
}

/** Starts renderSpeech now, for an engine that can synthesize several texts at once (an upstream). */
export function prefetchSpeech(
  engine: TtsEngine,
  text: string,
  opts: RenderOptions,
  signal?: AbortSignal,
): PrefetchedSpeech {
  let held: Int16Array[] = [];
  let sink: ((pcm: Int16Array) => void) | undefined;
  const done = renderSpeech(engine, text, opts, (pcm) => (sink ? sink(pcm) : held.push(pcm)), signal);
  done.catch(() => {}); // reported through attach()
  return {
    attach(onPcm) {
      for (const pcm of held) onPcm(pcm);
      held = [];
      sink = onPcm;
      return done;
    },
  };
}
