// Wire shapes of OpenAI's published audio API, as the upstream speech servers speak it
// (faster-whisper / whisper.cpp servers for transcriptions, Kokoro / Piper servers for speech).
// Defined once: the upstream engines send and read them, the tests' fake upstreams serve them.

export const TRANSCRIPTIONS_PATH = "/audio/transcriptions";
export const SPEECH_PATH = "/audio/speech";

/** `response_format` of POST /v1/audio/transcriptions. */
export const TRANSCRIPTION_FORMATS = ["json", "text", "srt", "verbose_json", "vtt"] as const;
export type TranscriptionFormat = (typeof TRANSCRIPTION_FORMATS)[number];
export const TIMESTAMP_GRANULARITIES = ["word", "segment"] as const;

/**
 * Multipart fields of POST /v1/audio/transcriptions: `file` (the audio file), `model`, and the
 * optional `language` (ISO-639-1), `prompt`, `response_format`, `temperature`, and
 * `timestamp_granularities[]` (repeated; only with verbose_json).
 */
export interface TranscriptionFields {
  model: string;
  language?: string;
  prompt?: string;
  response_format?: TranscriptionFormat;
  temperature?: number;
  "timestamp_granularities[]"?: (typeof TIMESTAMP_GRANULARITIES)[number][];
}

/** response_format json. */
export interface TranscriptionJson {
  text: string;
}

export interface TranscriptionWord {
  word: string;
  /** Seconds. */
  start: number;
  end: number;
}

export interface TranscriptionSegment {
  id: number;
  seek?: number;
  start: number;
  end: number;
  text: string;
  tokens?: number[];
  temperature?: number;
  avg_logprob?: number;
  compression_ratio?: number;
  no_speech_prob?: number;
}

/** response_format verbose_json (words/segments as timestamp_granularities[] asked). */
export interface TranscriptionVerbose {
  task?: "transcribe";
  language: string;
  /** Seconds of audio. */
  duration: number;
  text: string;
  words?: TranscriptionWord[];
  segments?: TranscriptionSegment[];
}

/** `response_format` of POST /v1/audio/speech. `pcm` is raw 24 kHz 16-bit signed little-endian mono. */
export const SPEECH_FORMATS = ["mp3", "opus", "aac", "flac", "wav", "pcm"] as const;
export type SpeechFormat = (typeof SPEECH_FORMATS)[number];
export const SPEECH_PCM_RATE = 24000;

/** JSON body of POST /v1/audio/speech; the answer is the audio, chunked as it is produced. */
export interface SpeechRequestBody {
  model: string;
  input: string;
  voice: string;
  response_format?: SpeechFormat;
  /** 0.25 to 4.0. */
  speed?: number;
  instructions?: string;
}
