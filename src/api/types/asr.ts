// E6 speech recognition: one JSON POST, transcript streamed back as SSE events.
import type { OpenString } from "./common.ts";

export const ASR_MODELS = ["svcaudio-2.5-asr", "svcaudio-2-asr-pro", "svc-asr-1.1-stream"] as const;
export type AsrModel = OpenString<(typeof ASR_MODELS)[number]>;
/** Legacy names and the model they equal. */
export const ASR_MODEL_ALIASES: Readonly<Record<string, string>> = {
  "svc-asr-1.1-stream": "svcaudio-2.5-asr",
};

export const ASR_FORMATS = ["ogg", "mp3", "wav", "pcm"] as const;
export type AsrFormatType = (typeof ASR_FORMATS)[number];

/** Chinese and English are supported; other values not shown. */
export const ASR_LANGUAGES = ["zh", "en"] as const;

export interface AsrTranscription {
  language?: OpenString<(typeof ASR_LANGUAGES)[number]>;
  hotwords?: string[];
  model?: AsrModel;
  /** Default true. */
  enable_itn?: boolean;
  /** Default false. */
  enable_timestamp?: boolean;
}

export interface AsrFormat {
  type: AsrFormatType;
  /** For `pcm`, typically `pcm_s16le`. */
  codec?: string;
  /** Required for `pcm`. */
  rate?: number;
  /** Required for `pcm`. */
  bits?: number;
  /** Required for `pcm`. */
  channel?: number;
}

export interface AsrRequest {
  audio: {
    /** Base64 audio. */
    data: string;
    input: {
      transcription?: AsrTranscription;
      format: AsrFormat;
    };
  };
}

export interface AsrMeta {
  session_id: string;
  /** Unix ms. */
  timestamp: number;
}

export interface TranscriptTextDeltaEvent {
  type: "transcript.text.delta";
  meta: AsrMeta;
  delta: string;
  // With enable_timestamp=true:
  item_id?: string;
  content_index?: number;
  /** ms into the audio. */
  start_time?: number;
  end_time?: number;
}

export interface AsrUsage {
  type: "realtime_asr";
  input_tokens: number;
  input_token_details: { text_tokens: number; audio_tokens: number };
  output_tokens: number;
  total_tokens: number;
}

export interface TranscriptTextDoneEvent {
  type: "transcript.text.done";
  meta: AsrMeta;
  /** Complete transcript. */
  text: string;
  usage: AsrUsage;
}

export interface AsrErrorEvent {
  type: "error";
  meta: AsrMeta;
  message: string;
}

export type AsrStreamEvent = TranscriptTextDeltaEvent | TranscriptTextDoneEvent | AsrErrorEvent;
