// Paths of every endpoint, relative to the base URL. The plan tier swaps the `/v1` prefix of the
// speech endpoints (E4, E5, E6) for `/svc_plan/v1`.

export const API_PREFIX = "/v1";
export const PLAN_PREFIX = "/svc_plan/v1";

export const PATHS = {
  chatCompletions: "/chat/completions",
  messages: "/messages",
  responses: "/responses",
  speech: "/audio/speech",
  realtimeAudio: "/realtime/audio",
  asrSse: "/audio/asr/sse",
  imageGenerations: "/images/generations",
  imageEdits: "/images/edits",
  files: "/files",
  voices: "/audio/voices",
} as const;

/** Endpoint families served under the plan tier prefix as well as under `/v1`. */
export const PLAN_TIER_PATHS = [PATHS.speech, PATHS.realtimeAudio, PATHS.asrSse] as const;
