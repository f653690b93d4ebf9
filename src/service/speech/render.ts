// Text to PCM at the requested rate and volume: the engine's stream is resampled in-process chunk by
// chunk and scaled, so the first audio leaves as soon as the engine produced its first chunk.
import { applyGain } from "../../../codecs/pcm.ts";
import { Resampler } from "../../../codecs/resample.ts";
import type { TtsEngine } from "../engines/tts/engine.ts";
import type { EngineVoice } from "../engines/tts/voices.ts";

export interface RenderOptions {
  voice: EngineVoice;
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
): Promise<void> {
  const rs = new Resampler(engine.sampleRate, opts.sampleRate);
  const out = (pcm: Int16Array) => {
    if (pcm.length === 0) return;
    onPcm(opts.volume === 1 ? pcm : applyGain(pcm, opts.volume, pcm));
  };
  await engine.synthesize({ text, voice: voiceFor(opts.voice, text), speed: opts.speed }, (chunk) =>
    out(rs.push(chunk)),
  );
  out(rs.flush());
}
