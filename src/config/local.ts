// The `local` section: the embedded local service (used when no hosted service is set), where it
// listens and keeps data, and the engines or upstream servers behind its endpoints.
import { z } from "zod";
import { faultsValue } from "./faults.ts";
import { latencyValue } from "./latency.ts";
import { httpUrl, port, url, wordList } from "./values.ts";

export const localSchema = z
  .object({
    host: z
      .string()
      .min(1)
      .default("127.0.0.1")
      .meta({ env: "SVC_LOCAL_HOST", description: "Address the embedded local service listens on." }),
    port: port.default(0).meta({
      env: "SVC_LOCAL_PORT",
      description: "Port the embedded local service listens on (0: any free port).",
    }),
    dataDir: z.string().min(1).default(".data").meta({
      env: "SVC_LOCAL_DATA_DIR",
      description:
        "Where the local service keeps files, voices and keys, and the bridge its call records (SQLite), token and reports.",
    }),
    apiKeys: wordList.default([]).meta({
      env: "SVC_LOCAL_API_KEYS",
      secret: true,
      description: "Keys the local service accepts; empty → one dev key kept in dataDir.",
    }),
    chatEngine: z.enum(["scripted", "openai-compatible"]).optional().meta({
      env: "SVC_CHAT_ENGINE",
      description:
        "Chat engine behind E1–E3: the scripted demo agent, or an OpenAI-compatible upstream (default: openai-compatible when chatUpstream is set, else scripted).",
    }),
    chatUpstream: url.optional().meta({
      env: "SVC_CHAT_UPSTREAM",
      description: "Base URL of a chat-completions server (…/v1) for the openai-compatible engine.",
    }),
    chatUpstreamModel: z.string().min(1).optional().meta({
      env: "SVC_CHAT_UPSTREAM_MODEL",
      description: "Model name sent upstream (upstreams do not know the svc-* names).",
    }),
    chatUpstreamApiKey: z.string().min(1).optional().meta({
      env: "SVC_CHAT_UPSTREAM_API_KEY",
      secret: true,
      description: "Bearer key sent to the chat upstream.",
    }),
    asrUpstream: httpUrl.optional().meta({
      env: "SVC_ASR_UPSTREAM",
      description:
        "Server (root or …/v1) that speaks OpenAI's audio API for recognition: E6 is forwarded to its /v1/audio/transcriptions (faster-whisper, whisper.cpp servers) instead of PocketSphinx.",
    }),
    asrUpstreamModel: z.string().min(1).optional().meta({
      env: "SVC_ASR_UPSTREAM_MODEL",
      description: "Model name sent to the recognition upstream (default whisper-1).",
    }),
    asrUpstreamApiKey: z.string().min(1).optional().meta({
      env: "SVC_ASR_UPSTREAM_API_KEY",
      secret: true,
      description: "Bearer key sent to the recognition upstream.",
    }),
    ttsUpstream: httpUrl.optional().meta({
      env: "SVC_TTS_UPSTREAM",
      description:
        "Server (root or …/v1) for synthesis: E4 and E5 through its /v1/audio/speech (Kokoro, Piper servers) instead of espeak-ng.",
    }),
    ttsUpstreamModel: z.string().min(1).optional().meta({
      env: "SVC_TTS_UPSTREAM_MODEL",
      description: "Model name sent to the speech upstream (default tts-1).",
    }),
    ttsUpstreamApiKey: z.string().min(1).optional().meta({
      env: "SVC_TTS_UPSTREAM_API_KEY",
      secret: true,
      description: "Bearer key sent to the speech upstream.",
    }),
    ttsUpstreamVoices: z
      .union([z.string(), z.record(z.string(), z.string())])
      .transform((v, ctx) => {
        if (typeof v !== "string") return v;
        const out: Record<string, string> = {};
        for (const item of v
          .split(",")
          .map((p) => p.trim())
          .filter(Boolean)) {
          const m = /^([^=\s]+)\s*=\s*(\S+)$/.exec(item);
          if (!m) {
            ctx.addIssue({
              code: "custom",
              message: `expected id=voice pairs such as en_female_aria=af_heart,*=alloy; got "${item}"`,
            });
            return z.NEVER;
          }
          out[m[1]!] = m[2]!;
        }
        return out;
      })
      .optional()
      .meta({
        env: "SVC_TTS_UPSTREAM_VOICES",
        type: "mapping of voice id → upstream voice (`id=voice,…` in the environment)",
        description:
          "Service voice id → upstream voice, `id=voice` comma-separated; `*=voice` for the rest (default alloy).",
      }),
    speechUpstreamTimeoutMs: z.coerce.number().int().min(100).max(600_000).default(30_000).meta({
      env: "SVC_SPEECH_UPSTREAM_TIMEOUT_MS",
      description:
        "Longest wait for a speech upstream's answer to start or continue, ms (then the request fails).",
    }),
    scriptedAgent: z.string().min(1).optional().meta({
      env: "SVC_SCRIPTED_AGENT",
      description: "YAML file of the scripted agent; default: the demo hotline shipped with the project.",
    }),
    scriptedPaceMs: z.coerce.number().min(0).max(10_000).default(15).meta({
      env: "SVC_SCRIPTED_PACE_MS",
      description: "Milliseconds between streamed words of the scripted engine (0: as fast as possible).",
    }),
    engineProfile: z.enum(["standard", "synthetic"]).default("standard").meta({
      env: "SVC_ENGINE_PROFILE",
      description:
        "Engines behind the speech and chat endpoints. `synthetic` is for benchmarks only: tones for speech, a fixed transcript, the scripted agent at zero pace (see docs/benchmarks.md).",
    }),
    latency: latencyValue.meta({
      env: "SVC_LOCAL_LATENCY",
      type: "`none`, `hosted`, or `asr=MS,chat=MS,tts=MS` (any subset), optionally with `jitter=N%,seed=N`",
      description:
        "A hosted service's timing, played by the local service: `hosted` is its published medians (asr=400, chat=550, tts=250 ms). E6's transcript waits asr ms after the upload's end, E1–E3's first chunk chat ms after the request, every E5 message tts ms (E4's first byte tts ms after the request); jitter varies each delay by up to ± N %, the same for a seed. See docs/local-service.md.",
    }),
    faults: faultsValue.meta({
      env: "SVC_LOCAL_FAULTS",
      type: "`none`, or `chat503=P,asr503=P,ttsCut=P,chatStall=P` (any subset, P 0-1 or N%), optionally with `seed=N`",
      description:
        "A hosted service's failures, played by the local service (tests and benchmarks): chat503 answers that share of E1–E3 requests 503 after the chat delay, asr503 that share of E6 requests 503 as they arrive, ttsCut closes that share of E5 sessions (1011) right after their first audio, chatStall stops that share of E1 streams after their first chunk and holds the connection (up to 120 s). Each kind draws from its own sequence, the same for a seed (default 1). See docs/local-service.md.",
    }),
    imageBlocklist: wordList.optional().meta({
      env: "SVC_IMAGE_BLOCKLIST",
      description:
        "Words and phrases that stop an image prompt (E7/E8 content_filtered); unset → built-in list.",
    }),
  })
  .prefault({})
  .meta({
    description:
      "The embedded local service (used when no hosted service is set): where it listens and keeps data, and the engines or upstream servers behind its endpoints.",
  });
