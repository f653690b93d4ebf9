// The `service` section: which service API the bridge talks to (hosted, or the embedded local one)
// and the models, voice and language every agent starts from.
import { z } from "zod";
import { url, wordList } from "./values.ts";

export const serviceSchema = z
  .object({
    baseUrl: url.optional().meta({
      env: "SVC_BASE_URL",
      description: "Hosted service; when absent (with no api key) the embedded local service is used.",
    }),
    apiKey: z
      .string()
      .min(1)
      .optional()
      .meta({ env: "SVC_API_KEY", secret: true, description: "Key for the hosted service." }),
    planTier: z.coerce.boolean().default(false).meta({
      env: "SVC_PLAN_TIER",
      description: "Use the subscription plan tier paths (/svc_plan/v1) for the speech endpoints.",
    }),
    chatModel: z
      .string()
      .min(1)
      .default("svc-3.5-flash")
      .meta({ env: "SVC_CHAT_MODEL", description: "Chat model the agents use unless they name their own." }),
    ttsModel: z.string().min(1).default("svc-tts-2").meta({
      env: "SVC_TTS_MODEL",
      description: "Speech synthesis model the agents use unless they name their own.",
    }),
    asrModel: z.string().min(1).default("svcaudio-2.5-asr").meta({
      env: "SVC_ASR_MODEL",
      description: "Speech recognition model the agents use unless they name their own.",
    }),
    voice: z.string().min(1).default("en_female_aria").meta({
      env: "SVC_VOICE",
      description: "Voice id for the agent (an official voice, or a cloned voice id with voiceLabel).",
    }),
    language: z.string().min(1).default("en").meta({ description: "Recognition language." }),
    hotwords: wordList.default([]).meta({
      env: "SVC_HOTWORDS",
      description: "Hotwords that bias recognition (product names, menu words).",
    }),
  })
  .prefault({})
  .meta({
    description:
      "The service API the bridge talks to (hosted, or the embedded local one) and the models, voice and language every agent starts from.",
  });
