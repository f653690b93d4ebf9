// E5 speech synthesis over WebSocket: client and server events. All messages are `{type, data}`;
// server messages add a unique `event_id`.
import type { Open, OpenString } from "./common.ts";
import type { PronunciationMap, TtsSampleRate, VoiceLabel } from "./speech.ts";

export const TTS_WS_MODELS = ["svc-tts-2", "svcaudio-2.5-tts", "svc-tts-vivid"] as const;

export const TTS_WS_FORMATS = [
  "wav",
  "mp3",
  "flac",
  "opus",
  "pcm",
  "mp3_stream",
  "opus_stream",
  "flac_stream",
] as const;
export type TtsWsFormat = (typeof TTS_WS_FORMATS)[number];

/** `default`: character-level buffering for LLM streaming; `sentence`: split on punctuation. */
export const TTS_MODES = ["default", "sentence"] as const;
export type TtsMode = (typeof TTS_MODES)[number];

// ---- client events ----

export interface TtsCreateData {
  /** From `tts.connection.done`. */
  session_id: string;
  voice_id: string;
  response_format?: TtsWsFormat;
  sample_rate?: TtsSampleRate;
  pronunciation_map?: PronunciationMap;
  /** 0.5 to 2.0. */
  speed_ratio?: number;
  /** 0.1 to 2.0. */
  volume_ratio?: number;
  mode?: TtsMode;
  /** At most 200 characters; only `svcaudio-2.5-tts`. */
  instruction?: string;
  markdown_filter?: boolean;
  voice_label?: VoiceLabel;
}

export interface TtsCreateEvent {
  type: "tts.create";
  data: TtsCreateData;
}
export interface TtsTextDeltaEvent {
  type: "tts.text.delta";
  /** text: at most 1,000 characters. */
  data: { session_id: string; text: string };
}
export interface TtsTextFlushEvent {
  type: "tts.text.flush";
  data: { session_id: string };
}
export interface TtsTextDoneEvent {
  type: "tts.text.done";
  data: { session_id: string };
}

export type TtsClientEvent = TtsCreateEvent | TtsTextDeltaEvent | TtsTextFlushEvent | TtsTextDoneEvent;
export type TtsClientEventType = TtsClientEvent["type"];

// ---- server events ----

/** "timestamp" in the spec, unit and encoding not shown. */
export type TtsTimestamp = number | string;

interface ServerEvent<T extends string, D> {
  type: T;
  data: D;
  event_id: string;
}

export type TtsConnectionDoneEvent = ServerEvent<"tts.connection.done", { session_id: string }>;
export type TtsResponseCreatedEvent = ServerEvent<"tts.response.created", { session_id: string }>;
export type TtsSentenceStartEvent = ServerEvent<
  "tts.response.sentence.start",
  { session_id: string; text: string; started_at: TtsTimestamp }
>;
export type TtsAudioDeltaEvent = ServerEvent<
  "tts.response.audio.delta",
  {
    session_id: string;
    status: "unfinished" | "finished";
    /** Base64, playable immediately. */
    audio: string;
    /** Seconds. */
    duration: number;
  }
>;
export type TtsSentenceEndEvent = ServerEvent<
  "tts.response.sentence.end",
  { session_id: string; text: string; ended_at: TtsTimestamp }
>;
export type TtsTextFlushedEvent = ServerEvent<"tts.text.flushed", { session_id: string }>;
/** Reply to `tts.text.done` and on 60 s idle; `audio` is all audio of the session; the connection then closes. */
export type TtsAudioDoneEvent = ServerEvent<"tts.response.audio.done", { session_id: string; audio: string }>;
/** Older spelling of TtsAudioDoneEvent seen in the provider's docs; clients accept both. */
export type TtsLegacyAudioDoneEvent = ServerEvent<
  "response.audio.done",
  { session_id: string; audio: string }
>;
export type TtsResponseErrorEvent = ServerEvent<
  "tts.response.error",
  {
    session_id: string;
    /** Text, e.g. `503` for overload; catalog not shown. */
    code: OpenString<"503">;
    message: string;
    details: Open<{ error: unknown }>;
  }
>;

export type TtsServerEvent =
  | TtsConnectionDoneEvent
  | TtsResponseCreatedEvent
  | TtsSentenceStartEvent
  | TtsAudioDeltaEvent
  | TtsSentenceEndEvent
  | TtsTextFlushedEvent
  | TtsAudioDoneEvent
  | TtsLegacyAudioDoneEvent
  | TtsResponseErrorEvent;
export type TtsServerEventType = TtsServerEvent["type"];

/** Both spellings of the end-of-session event. */
export const TTS_AUDIO_DONE_TYPES = ["tts.response.audio.done", "response.audio.done"] as const;
