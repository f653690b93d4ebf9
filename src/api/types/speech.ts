// E4 speech synthesis over HTTP: request, SSE audio events, and the voice options shared with E5.
import type { Open, OpenString } from "./common.ts";

export const TTS_MODELS = ["svc-tts-2", "svcaudio-2.5-tts", "svc-tts-vivid"] as const;
export type TtsModel = OpenString<(typeof TTS_MODELS)[number]>;
/** Deprecated names still served. */
export const TTS_DEPRECATED_MODELS = ["svc-tts-vivid"] as const;
/** The only model that accepts `instruction` and `()` inline instructions, and rejects `voice_label`. */
export const TTS_INSTRUCTION_MODEL = "svcaudio-2.5-tts";

export const TTS_HTTP_FORMATS = ["wav", "mp3", "flac", "opus", "pcm"] as const;
export type TtsHttpFormat = (typeof TTS_HTTP_FORMATS)[number];

/** 48000 was added in a later iteration. */
export const TTS_SAMPLE_RATES = [8000, 16000, 22050, 24000, 48000] as const;
export type TtsSampleRate = (typeof TTS_SAMPLE_RATES)[number];
export const TTS_DEFAULT_SAMPLE_RATE = 24000;

export const SPEECH_STREAM_FORMATS = ["audio", "sse"] as const;
export type SpeechStreamFormat = (typeof SPEECH_STREAM_FORMATS)[number];

export const VOICE_LABEL_LANGUAGES = ["Cantonese", "Sichuanese", "Japanese"] as const;

/**
 * Required for a custom voice; only ONE of language, emotion, style at a time. Emotion (up to 11
 * options, e.g. Happy, Angry) and style (up to 17) sets vary by model and are not listed.
 */
export type VoiceLabel =
  | { language: OpenString<(typeof VOICE_LABEL_LANGUAGES)[number]>; emotion?: never; style?: never }
  | { emotion: OpenString<"Happy" | "Angry">; language?: never; style?: never }
  | { style: string; language?: never; emotion?: never };

/** `tone`: strings `<source>/<replacement>`; Chinese tones as digits 1–4, 5 for neutral. */
export type PronunciationMap = Open<{ tone: string[] }>;

export interface SpeechRequest {
  model: TtsModel;
  /** At most 1,000 characters; with `svcaudio-2.5-tts` text inside `()` is an instruction. */
  input: string;
  /** Official voice or cloned voice id. */
  voice: string;
  response_format?: TtsHttpFormat;
  /** 0.5 to 2.0. */
  speed?: number;
  /** 0.1 to 2.0. */
  volume?: number;
  voice_label?: VoiceLabel;
  /** At most 200 characters; only with `svcaudio-2.5-tts`. */
  instruction?: string;
  sample_rate?: TtsSampleRate;
  pronunciation_map?: PronunciationMap;
  stream_format?: SpeechStreamFormat;
  markdown_filter?: boolean;
  /** Non-streaming only: answer with a URL (valid 12 h) instead of audio. */
  return_url?: boolean;
}

/**
 * Body of a `return_url` answer. The spec does not show it; the local service sends `{url}` and
 * anything else passes through.
 */
export type SpeechUrlResult = Open<{ url?: string }>;

// ---- SSE (stream_format=sse): `data: <JSON>` lines, ending with `data: [DONE]` ----

export interface SpeechAudioDeltaEvent {
  type: "speech.audio.delta";
  /** Base64 audio chunk; concatenate all for the full audio. */
  audio: string;
}

export interface SpeechAudioDoneEvent {
  type: "speech.audio.done";
  /** Empty string. */
  audio: string;
}

/** Fields not shown. */
export type SpeechAudioErrorEvent = Open<{ type: "speech.audio.error"; message?: string }>;

export type SpeechStreamEvent = SpeechAudioDeltaEvent | SpeechAudioDoneEvent | SpeechAudioErrorEvent;
