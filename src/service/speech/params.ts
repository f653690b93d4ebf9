// Validation of the synthesis parameters shared by E4 (HTTP body) and E5 (tts.create): model,
// voice and voice_label, instruction, speed/volume, sample rate, pronunciation map, markdown filter.
// Problems come back as {param, message}; each endpoint reports them its own way.

import { LIMITS } from "../../api/types/limits.ts";
import {
  TTS_INSTRUCTION_MODEL,
  TTS_MODELS,
  TTS_SAMPLE_RATES,
  VOICE_LABEL_LANGUAGES,
} from "../../api/types/speech.ts";
import {
  type ClonedVoiceResolver,
  type EngineVoice,
  isClonedVoiceId,
  OFFICIAL_VOICES,
  officialVoice,
} from "../engines/tts/voices.ts";
import { stripInstructions } from "./instructions.ts";
import { stripMarkdown } from "./markdown.ts";
import { applyPronunciation, type PronunciationRule, parsePronunciationMap } from "./pronunciation.ts";

export interface ParamProblem {
  param: string;
  message: string;
}

export class ParamError extends Error {
  readonly param: string;
  constructor(param: string, message: string) {
    super(`${param}: ${message}`);
    this.param = param;
  }
}

export interface SynthesisParams {
  model: string;
  voice: EngineVoice;
  /** The voice id as the caller gave it (official or cloned). */
  voiceId: string;
  speed: number;
  volume: number;
  sampleRate: number;
  rules: PronunciationRule[];
  markdown: boolean;
  /** Whether () holds instructions to drop (svcaudio-2.5-tts only). */
  inlineInstructions: boolean;
  /** Global guidance (svcaudio-2.5-tts only); an upstream speech server gets it as `instructions`. */
  instruction?: string;
}

/** Field names that differ between E4 and E5. */
export interface FieldNames {
  voice: "voice" | "voice_id";
  speed: "speed" | "speed_ratio";
  volume: "volume" | "volume_ratio";
}

export const E4_FIELDS: FieldNames = { voice: "voice", speed: "speed", volume: "volume" };
export const E5_FIELDS: FieldNames = { voice: "voice_id", speed: "speed_ratio", volume: "volume_ratio" };

export function checkModel(model: unknown, param = "model"): string {
  if (typeof model !== "string" || model === "") throw new ParamError(param, "is required (a string)");
  if (!(TTS_MODELS as readonly string[]).includes(model)) {
    throw new ParamError(param, `unknown model "${model}"; use one of ${TTS_MODELS.join(", ")}`);
  }
  return model;
}

function range(body: Record<string, unknown>, name: string, r: { min: number; max: number }): number {
  const v = body[name];
  if (v === undefined || v === null) return 1;
  if (typeof v !== "number" || !Number.isFinite(v)) throw new ParamError(name, "must be a number");
  if (v < r.min || v > r.max) throw new ParamError(name, `must be between ${r.min} and ${r.max}, got ${v}`);
  return v;
}

const EMOTION_TUNING: Readonly<Record<string, Partial<EngineVoice> & { rate?: number }>> = {
  happy: { pitch: 12, range: 20, rate: 1.08 },
  excited: { pitch: 15, range: 25, rate: 1.12 },
  angry: { pitch: -5, range: 30, rate: 1.05 },
  sad: { pitch: -10, range: -25, rate: 0.88 },
  calm: { pitch: -3, range: -15, rate: 0.95 },
  fearful: { pitch: 10, range: 10, rate: 1.1 },
  surprised: { pitch: 15, range: 30, rate: 1 },
};

const LANGUAGE_VOICES: Readonly<Record<string, string>> = {
  Cantonese: "yue",
  Sichuanese: "cmn",
  Japanese: "ja",
};

/** Applies a checked voice_label: a language picks the engine language, an emotion shapes prosody. */
function applyLabel(voice: EngineVoice, label: Record<string, string>): EngineVoice {
  if (label.language) {
    const variant = voice.espeak.includes("+") ? voice.espeak.slice(voice.espeak.indexOf("+")) : "";
    return { ...voice, espeak: `${LANGUAGE_VOICES[label.language]}${variant}`, language: "zh" };
  }
  const tune = label.emotion ? EMOTION_TUNING[label.emotion.toLowerCase()] : undefined;
  if (!tune) return voice; // styles and other emotions: accepted, spoken in the voice's own manner
  const clamp = (x: number) => Math.max(0, Math.min(100, x));
  return {
    ...voice,
    pitch: clamp(voice.pitch + (tune.pitch ?? 0)),
    range: clamp(voice.range + (tune.range ?? 0)),
    wpm: Math.round(voice.wpm * (tune.rate ?? 1)),
  };
}

function checkLabel(value: unknown): Record<string, string> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ParamError("voice_label", "must be an object with one of language, emotion, style");
  }
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  const known = entries.filter(([k]) => k === "language" || k === "emotion" || k === "style");
  const unknown = entries.filter(([k]) => !(k === "language" || k === "emotion" || k === "style"));
  if (unknown.length > 0) {
    throw new ParamError("voice_label", `unknown field ${unknown[0]![0]}; only language, emotion or style`);
  }
  if (known.length !== 1) {
    throw new ParamError("voice_label", "give exactly one of language, emotion, style");
  }
  const [key, v] = known[0]!;
  if (typeof v !== "string" || v.trim() === "")
    throw new ParamError(`voice_label.${key}`, "must be a non-empty string");
  if (key === "language" && !(VOICE_LABEL_LANGUAGES as readonly string[]).includes(v)) {
    throw new ParamError("voice_label.language", `must be one of ${VOICE_LABEL_LANGUAGES.join(", ")}`);
  }
  return { [key]: v };
}

/** Checks the shared synthesis fields of a body; throws ParamError on the first problem. */
export function parseSynthesisParams(
  body: Record<string, unknown>,
  model: string,
  names: FieldNames,
  account: string,
  cloned?: ClonedVoiceResolver,
): SynthesisParams {
  const is25 = model === TTS_INSTRUCTION_MODEL;
  const voiceId = body[names.voice];
  if (typeof voiceId !== "string" || voiceId === "") {
    throw new ParamError(names.voice, "is required: an official voice id or a cloned voice id");
  }
  const isCloned = isClonedVoiceId(voiceId);
  let voice: EngineVoice | undefined = isCloned ? cloned?.(account, voiceId) : officialVoice(voiceId);
  if (!voice) {
    throw new ParamError(
      names.voice,
      isCloned
        ? `no cloned voice "${voiceId}" for this account`
        : `unknown voice "${voiceId}"; official voices: ${OFFICIAL_VOICES.map((v) => v.id).join(", ")}`,
    );
  }
  const label = body.voice_label;
  if (label !== undefined && label !== null) {
    if (is25) throw new ParamError("voice_label", `is not accepted with ${TTS_INSTRUCTION_MODEL}`);
    voice = applyLabel(voice, checkLabel(label));
  } else if (isCloned && !is25) {
    throw new ParamError("voice_label", "is required for a cloned voice (one of language, emotion, style)");
  }
  const instruction = body.instruction;
  if (instruction !== undefined && instruction !== null) {
    if (!is25) throw new ParamError("instruction", `is only valid with ${TTS_INSTRUCTION_MODEL}`);
    if (typeof instruction !== "string") throw new ParamError("instruction", "must be a string");
    if ([...instruction].length > LIMITS.instructionMaxChars) {
      throw new ParamError("instruction", `at most ${LIMITS.instructionMaxChars} characters`);
    }
  }
  const speed = range(body, names.speed, LIMITS.speed);
  const volume = range(body, names.volume, LIMITS.volume);
  const rate = body.sample_rate ?? 24000;
  if (!(TTS_SAMPLE_RATES as readonly unknown[]).includes(rate)) {
    throw new ParamError("sample_rate", `must be one of ${TTS_SAMPLE_RATES.join(", ")}`);
  }
  const rules = parsePronunciationMap(body.pronunciation_map);
  if (typeof rules === "string") throw new ParamError("pronunciation_map", rules);
  const md = body.markdown_filter;
  if (md !== undefined && md !== null && typeof md !== "boolean") {
    throw new ParamError("markdown_filter", "must be a boolean");
  }
  return {
    model,
    voice,
    voiceId,
    speed,
    volume,
    sampleRate: rate as number,
    rules,
    markdown: md === true,
    inlineInstructions: is25,
    ...(typeof instruction === "string" && instruction.trim() ? { instruction } : {}),
  };
}

/** The text the engine speaks: instructions dropped, Markdown filtered, pronunciation rules applied. */
export function spokenText(text: string, p: SynthesisParams): string {
  let t = p.inlineInstructions ? stripInstructions(text) : text;
  if (p.markdown) t = stripMarkdown(t);
  t = applyPronunciation(t, p.rules);
  return t.replace(/\s+/g, " ").trim();
}
