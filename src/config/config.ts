// One configuration for the whole program: defaults, then an optional config file
// (YAML or JSON), then environment variables, validated once at start-up. Errors name
// the key (as the user wrote it: file path or env variable) and say what is expected.
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { agentName, agentSchema, defaultAgentSchema } from "./agent.ts";
import { OUTBOUND_ENV_KEYS, outboundSchema } from "./outbound.ts";
import { routeSchema, webhookSchema } from "./routes.ts";
import {
  allowFromSchema,
  digestAlgorithmsSchema,
  rateLimitSchema,
  registrationsSchema,
  srtpSchema,
  tlsPortSchema,
  usersSchema,
} from "./sip-access.ts";
import { unknownKeyMessage, unknownKeys } from "./unknown-keys.ts";
import { flag, httpUrl, port, url } from "./values.ts";

export const configSchema = z.object({
  server: z
    .object({
      host: z
        .string()
        .min(1)
        .default("0.0.0.0")
        .meta({ description: "Address the bridge's HTTP server listens on." }),
      port: port.default(8080).meta({
        description: "Port the bridge's HTTP server listens on (Twilio, console, probes, /metrics).",
      }),
      publicUrl: url.optional().meta({
        description: "Public https URL of this bridge, as Twilio reaches it (for TwiML and signatures).",
      }),
      token: z
        .preprocess(
          (v) => (v === false ? "off" : v),
          z.union([
            z.literal("off"),
            z.string().min(16, { error: 'expected a token of at least 16 characters, or "off"' }),
          ]),
        )
        .optional()
        .meta({
          secret: true,
          description:
            "Bearer token people need for the bridge's own pages and records: the console, its live feed, browser calls, /calls and recordings (Twilio's routes have their signature; probes and /metrics stay open). Unset: a random token is made at first start and kept in <local.dataDir>/bridge-token (mode 600). `off`: no token asked, on purpose.",
        }),
    })
    .prefault({})
    .meta({
      description:
        "The bridge's HTTP server: where it listens, how the outside reaches it, who may use its pages.",
    }),
  console: z
    .object({
      enabled: z.boolean({ error: "expected true or false" }).optional().meta({
        description:
          "The live console at / and browser calls (WS /browser/call). Unset: on with the embedded local service (the offline demo), off with a hosted service.",
      }),
    })
    .prefault({})
    .meta({ description: "The live console and browser calls." }),
  service: z
    .object({
      baseUrl: url.optional().meta({
        description: "Hosted service; when absent (with no api key) the embedded local service is used.",
      }),
      apiKey: z.string().min(1).optional().meta({ secret: true, description: "Key for the hosted service." }),
      planTier: z.coerce.boolean().default(false).meta({
        description: "Use the subscription plan tier paths (/svc_plan/v1) for the speech endpoints.",
      }),
      chatModel: z
        .string()
        .min(1)
        .default("svc-3.5-flash")
        .meta({ description: "Chat model the agents use unless they name their own." }),
      ttsModel: z
        .string()
        .min(1)
        .default("svc-tts-2")
        .meta({ description: "Speech synthesis model the agents use unless they name their own." }),
      asrModel: z
        .string()
        .min(1)
        .default("svcaudio-2.5-asr")
        .meta({ description: "Speech recognition model the agents use unless they name their own." }),
      voice: z.string().min(1).default("en_female_aria").meta({
        description: "Voice id for the agent (an official voice, or a cloned voice id with voiceLabel).",
      }),
      language: z.string().min(1).default("en").meta({ description: "Recognition language." }),
      hotwords: z
        .union([z.string(), z.array(z.string())])
        .transform((v) => (Array.isArray(v) ? v : v.split(",")).map((k) => k.trim()).filter(Boolean))
        .default([])
        .meta({ description: "Hotwords that bias recognition (product names, menu words)." }),
    })
    .prefault({})
    .meta({
      description:
        "The service API the bridge talks to (hosted, or the embedded local one) and the models, voice and language every agent starts from.",
    }),
  agent: defaultAgentSchema.prefault({}).meta({
    description: "The agent named `default`: it takes every call no route gives to another.",
  }),
  agents: z.record(agentName, agentSchema).default({}).meta({
    description: "More agents by name; a route or the call-start webhook picks one per call.",
  }),
  routes: z.array(routeSchema).default([]).meta({
    description: "Which agent takes a call: the first route that matches, else `default`.",
  }),
  agentWebhook: webhookSchema.optional().meta({
    description:
      "Asked at the start of every call (unless its route has its own): agent, variables, overrides.",
  }),
  local: z
    .object({
      host: z
        .string()
        .min(1)
        .default("127.0.0.1")
        .meta({ description: "Address the embedded local service listens on." }),
      port: port
        .default(0)
        .meta({ description: "Port the embedded local service listens on (0: any free port)." }),
      dataDir: z.string().min(1).default(".data").meta({
        description:
          "Where the local service keeps files, voices and keys, and the bridge its call records (SQLite), token and reports.",
      }),
      apiKeys: z
        .union([z.string(), z.array(z.string())])
        .transform((v) => (Array.isArray(v) ? v : v.split(",")).map((k) => k.trim()).filter(Boolean))
        .default([])
        .meta({
          secret: true,
          description: "Keys the local service accepts; empty → one dev key kept in dataDir.",
        }),
      chatEngine: z.enum(["scripted", "openai-compatible"]).optional().meta({
        description:
          "Chat engine behind E1–E3: the scripted demo agent, or an OpenAI-compatible upstream (default: openai-compatible when chatUpstream is set, else scripted).",
      }),
      chatUpstream: url.optional().meta({
        description: "Base URL of a chat-completions server (…/v1) for the openai-compatible engine.",
      }),
      chatUpstreamModel: z.string().min(1).optional().meta({
        description: "Model name sent upstream (upstreams do not know the svc-* names).",
      }),
      chatUpstreamApiKey: z
        .string()
        .min(1)
        .optional()
        .meta({ secret: true, description: "Bearer key sent to the chat upstream." }),
      asrUpstream: httpUrl.optional().meta({
        description:
          "Server (root or …/v1) that speaks OpenAI's audio API for recognition: E6 is forwarded to its /v1/audio/transcriptions (faster-whisper, whisper.cpp servers) instead of PocketSphinx.",
      }),
      asrUpstreamModel: z.string().min(1).optional().meta({
        description: "Model name sent to the recognition upstream (default whisper-1).",
      }),
      asrUpstreamApiKey: z
        .string()
        .min(1)
        .optional()
        .meta({ secret: true, description: "Bearer key sent to the recognition upstream." }),
      ttsUpstream: httpUrl.optional().meta({
        description:
          "Server (root or …/v1) for synthesis: E4 and E5 through its /v1/audio/speech (Kokoro, Piper servers) instead of espeak-ng.",
      }),
      ttsUpstreamModel: z.string().min(1).optional().meta({
        description: "Model name sent to the speech upstream (default tts-1).",
      }),
      ttsUpstreamApiKey: z
        .string()
        .min(1)
        .optional()
        .meta({ secret: true, description: "Bearer key sent to the speech upstream." }),
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
          type: "mapping of voice id → upstream voice (`id=voice,…` in the environment)",
          description:
            "Service voice id → upstream voice, `id=voice` comma-separated; `*=voice` for the rest (default alloy).",
        }),
      speechUpstreamTimeoutMs: z.coerce.number().int().min(100).max(600_000).default(30_000).meta({
        description:
          "Longest wait for a speech upstream's answer to start or continue, ms (then the request fails).",
      }),
      scriptedAgent: z.string().min(1).optional().meta({
        description: "YAML file of the scripted agent; default: the demo hotline shipped with the project.",
      }),
      scriptedPaceMs: z.coerce.number().min(0).max(10_000).default(15).meta({
        description: "Milliseconds between streamed words of the scripted engine (0: as fast as possible).",
      }),
      engineProfile: z.enum(["standard", "synthetic"]).default("standard").meta({
        description:
          "Engines behind the speech and chat endpoints. `synthetic` is for benchmarks only: tones for speech, a fixed transcript, the scripted agent at zero pace (see docs/benchmarks.md).",
      }),
      imageBlocklist: z
        .union([z.string(), z.array(z.string())])
        .transform((v) => (Array.isArray(v) ? v : v.split(",")).map((k) => k.trim()).filter(Boolean))
        .optional()
        .meta({
          description:
            "Words and phrases that stop an image prompt (E7/E8 content_filtered); unset → built-in list.",
        }),
    })
    .prefault({})
    .meta({
      description:
        "The embedded local service (used when no hosted service is set): where it listens and keeps data, and the engines or upstream servers behind its endpoints.",
    }),
  twilio: z
    .object({
      accountSid: z
        .string()
        .regex(/^AC[0-9a-fA-F]{32}$/, { error: "expected an Account SID: AC followed by 32 hex digits" })
        .optional()
        .meta({
          description:
            "Account SID (AC…); with authToken it enables hang-up and transfer through the REST API.",
        }),
      authToken: z.string().min(1).optional().meta({
        secret: true,
        description: "Auth token: checks X-Twilio-Signature on the voice webhook and the media WebSocket.",
      }),
    })
    .prefault({})
    .meta({ description: "Twilio Media Streams: the account that signs requests and takes REST calls." }),
  sip: z
    .object({
      port: z
        .union([z.literal(false), z.literal("off").transform(() => false as const), port])
        .default(5060)
        .meta({ description: "SIP signalling port (UDP and TCP); false (`off`) disables SIP." }),
      host: z.string().min(1).default("0.0.0.0").meta({ description: "Address SIP and RTP bind to." }),
      publicIp: z.ipv4({ error: "expected an IPv4 address such as 203.0.113.7" }).optional().meta({
        description: "Address advertised in Contact and SDP when the bridge is behind NAT.",
      }),
      rtpPorts: z
        .string()
        .regex(/^\d+-\d+$/, { error: "expected a range LOW-HIGH such as 10000-20000" })
        .refine(
          (v) => {
            const [lo, hi] = v.split("-").map(Number) as [number, number];
            return lo >= 1024 && hi <= 65535 && hi - lo >= 1;
          },
          { error: "expected LOW-HIGH within 1024-65535, LOW below HIGH" },
        )
        .default("10000-20000")
        .meta({
          type: "port range LOW-HIGH",
          description: 'RTP port range, "LOW-HIGH" (even ports are used for RTP).',
        }),
      codecs: z
        .union([z.string(), z.array(z.string())])
        .transform((v) =>
          (Array.isArray(v) ? v : v.split(",")).map((k) => k.trim().toLowerCase()).filter(Boolean),
        )
        .pipe(
          z
            .array(z.enum(["opus", "pcmu", "pcma"], { error: "expected codecs among opus, pcmu, pcma" }))
            .min(1, { error: "expected at least one of opus, pcmu, pcma" }),
        )
        .default(["opus", "pcmu", "pcma"])
        .meta({ description: "Codecs offered and accepted, in preference order." }),
      mediaTimeoutS: z.coerce.number().int().min(1).max(3600).default(30).meta({
        description: "Hang up when no RTP arrives for this long, seconds.",
      }),
      rtpThread: z.enum(["worker", "main"], { error: "expected worker or main" }).default("worker").meta({
        description:
          "Where the calls' RTP is received and decoded: `worker`, a thread of its own whose loop does nothing but packets (on time while the sessions are busy), or `main`, the bridge's own thread. Either way the agent's packets leave from the native send thread.",
      }),
      allowFrom: allowFromSchema.meta({
        type: "list of CIDR ranges, or `any`",
        description:
          "Sources (CIDR ranges) that may send requests; others get 403. Default: loopback and the private ranges; `any` opens it to everyone. Registrars and outbound proxies are added.",
      }),
      rateLimit: rateLimitSchema.meta({
        description:
          "Requests per second each source may send outside calls; a flood beyond it is dropped. 0: no limit.",
      }),
      users: usersSchema.meta({
        secret: true,
        description:
          "`user:password` pairs; when set, every new INVITE must pass HTTP digest authentication.",
      }),
      digestAlgorithms: digestAlgorithmsSchema.meta({
        description: "Digest algorithms offered with sip.users, in order of preference (MD5, SHA-256).",
      }),
      registrations: registrationsSchema.meta({
        secret: true,
        description:
          "Accounts the bridge registers with: `sip:user:password@registrar[:port][;transport=…][;expires=N]` (whitespace-separated in the environment), or objects in a config file.",
      }),
      tlsPort: tlsPortSchema.meta({
        description:
          "SIP over TLS on this port (5061 by convention); off unless set. Needs tlsCert and tlsKey.",
      }),
      tlsCert: z.string().min(1).optional().meta({
        description: "PEM certificate (chain) file for TLS; read again on reload (SIGHUP).",
      }),
      tlsKey: z
        .string()
        .min(1)
        .optional()
        .meta({ description: "PEM private key file for TLS; read again on reload (SIGHUP)." }),
      tlsVerify: flag.default(true).meta({
        description:
          "Check the certificate chain and name of TLS peers we connect to (registrars); false only for tests.",
      }),
      srtp: srtpSchema.meta({
        description:
          "SDES-SRTP: off, optional (take it when the caller offers it) or required (plain RTP gets 488).",
      }),
    })
    .prefault({})
    .superRefine((v, ctx) => {
      if (v.tlsPort === false) return;
      for (const key of ["tlsCert", "tlsKey"] as const)
        if (!v[key])
          ctx.addIssue({
            code: "custom",
            path: [key],
            message: `required when sip.tlsPort (SIP_TLS_PORT) is set: set ${key === "tlsCert" ? "SIP_TLS_CERT" : "SIP_TLS_KEY"} to a PEM file`,
          });
    })
    .meta({
      description:
        "SIP signalling and RTP media: ports, NAT, codecs, who may call, registrations, TLS and SRTP.",
    }),
  /** Calls the bridge places (POST /calls, voice-bridge dial): limits, defaults, carriers. */
  outbound: outboundSchema,
  audiosocket: z
    .object({
      port: z
        .union([z.literal(false), z.literal("off").transform(() => false as const), port])
        .default(false)
        .meta({ description: "Asterisk AudioSocket TCP port; unset or false (`off`) disables it." }),
      host: z
        .string()
        .min(1)
        .default("0.0.0.0")
        .meta({ description: "Address the AudioSocket server listens on." }),
    })
    .prefault({})
    .meta({ description: "Asterisk AudioSocket: calls that Asterisk hands over a TCP stream." }),
  discord: z
    .object({
      token: z
        .string()
        .min(1)
        .optional()
        .meta({ secret: true, description: "Bot token; the Discord bot runs whenever it is set." }),
      apiBase: url.default("https://discord.com/api").meta({
        description: "Base URL of Discord's API (REST; the gateway URL comes from /gateway/bot).",
      }),
      autoJoin: z
        .union([z.string(), z.array(z.string())])
        .transform((v) => (Array.isArray(v) ? v : v.split(",")).map((k) => k.trim()).filter(Boolean))
        .pipe(
          z.array(z.string().regex(/^\d{15,21}$/, { error: "expected a channel id (a snowflake: digits)" })),
        )
        .default([])
        .meta({ description: "Voice channel ids joined at start (comma-separated in the environment)." }),
      respondTo: z.enum(["all", "mention"]).default("all").meta({
        description: "`all`: answer every turn; `mention`: only turns that address the agent by name.",
      }),
      agentName: z.string().min(1).optional().meta({
        description: "The name members call the agent by (mention mode); default: the bot's user name.",
      }),
      textLog: z.coerce.boolean().default(false).meta({
        description: "Post the conversation to the voice channel's text chat as it happens.",
      }),
      shards: z
        .union([z.literal("auto"), z.coerce.number().int().min(1).max(1000)])
        .optional()
        .meta({
          description:
            "Shard processes: a number, or `auto` (Discord's recommendation); unset runs one process.",
        }),
    })
    .prefault({})
    .meta({ description: "The Discord bot: an agent in voice channels." }),
  callReports: z
    .object({
      url: url.optional().meta({
        description:
          "Each ended call's record is POSTed here (JSON, signed with `secret`); unset: no reports.",
      }),
      secret: z.string().min(16, { error: "expected a secret of at least 16 characters" }).optional().meta({
        secret: true,
        description: "Shared secret of the HMAC-SHA256 signature; required with `url`.",
      }),
      dir: z.string().min(1).optional().meta({
        description: "Reports wait here until delivered; default: <local.dataDir>/call-reports.",
      }),
    })
    .prefault({})
    .superRefine((v, ctx) => {
      if (v.url && !v.secret)
        ctx.addIssue({
          code: "custom",
          path: ["secret"],
          message: "required when callReports.url (CALL_REPORT_URL) is set: set CALL_REPORT_SECRET",
        });
    })
    .meta({ description: "Call reports: each ended call's record, signed and POSTed to your server." }),
  store: z
    .object({
      databaseUrl: z
        .string()
        .regex(/^postgres(ql)?:\/\/\S+$/, {
          error: "expected a postgres://user:password@host:5432/database URL",
        })
        .optional()
        .meta({
          secret: true,
          type: "PostgreSQL URL",
          description:
            "PostgreSQL for call records (postgres://user:password@host:5432/database), shared by every bridge on it. Unset: SQLite in <local.dataDir>/voice-bridge.db.",
        }),
      instance: z.string().min(1).max(64).optional().meta({
        description:
          "This bridge's name in the records and the console (several bridges on one database). Default: the host name.",
      }),
      lostAfterSeconds: z.coerce.number().min(1).max(3600).default(30).meta({
        description:
          "PostgreSQL: a bridge silent this long is lost (killed, its machine gone); the next bridge that notices ends its live calls with reason `instance lost`. Each bridge says it is alive six times in this period.",
      }),
      keepEnded: z.coerce.number().int().min(0).max(100_000).default(200).meta({
        description: "Ended calls kept in memory for the console and reports (the live ones always are).",
      }),
    })
    .prefault({})
    .meta({ description: "Where call records are kept (SQLite, or PostgreSQL shared by several bridges)." }),
  log: z
    .object({
      level: z
        .enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"])
        .default("info")
        .meta({ description: "Lowest level of log lines written (pino levels)." }),
      format: z.enum(["auto", "pretty", "json"]).default("auto").meta({
        description:
          "`pretty` lines for a person, `json` lines for a collector; `auto`: pretty in a terminal, JSON otherwise.",
      }),
    })
    .prefault({})
    .meta({ description: "Logging." }),
});

export type Config = z.infer<typeof configSchema>;

/** Environment variables and the config path each one sets. */
export const ENV_KEYS: Readonly<Record<string, readonly string[]>> = {
  HOST: ["server", "host"],
  PORT: ["server", "port"],
  PUBLIC_URL: ["server", "publicUrl"],
  BRIDGE_TOKEN: ["server", "token"],
  CONSOLE_ENABLED: ["console", "enabled"],
  SVC_BASE_URL: ["service", "baseUrl"],
  SVC_API_KEY: ["service", "apiKey"],
  SVC_PLAN_TIER: ["service", "planTier"],
  SVC_CHAT_MODEL: ["service", "chatModel"],
  SVC_TTS_MODEL: ["service", "ttsModel"],
  SVC_ASR_MODEL: ["service", "asrModel"],
  SVC_VOICE: ["service", "voice"],
  SVC_HOTWORDS: ["service", "hotwords"],
  AGENT_SYSTEM_PROMPT: ["agent", "systemPrompt"],
  AGENT_GREETING: ["agent", "greeting"],
  AGENT_TRANSFER_TARGET: ["agent", "transferTarget"],
  AGENT_RECORDING_DIR: ["agent", "recordingDir"],
  AGENT_END_OF_TURN_CONFIDENCE: ["agent", "endOfTurnConfidence"],
  AGENT_END_OF_TURN_LM: ["agent", "endOfTurnLm"],
  AGENT_END_OF_TURN_LM_WEIGHT: ["agent", "endOfTurnLmWeight"],
  AGENT_END_OF_TURN_PROSODY: ["agent", "endOfTurnProsody"],
  AGENT_ADAPT_TO_CALLER: ["agent", "adaptToCaller"],
  SVC_LOCAL_HOST: ["local", "host"],
  SVC_LOCAL_PORT: ["local", "port"],
  SVC_LOCAL_DATA_DIR: ["local", "dataDir"],
  SVC_LOCAL_API_KEYS: ["local", "apiKeys"],
  SVC_CHAT_ENGINE: ["local", "chatEngine"],
  SVC_CHAT_UPSTREAM: ["local", "chatUpstream"],
  SVC_CHAT_UPSTREAM_MODEL: ["local", "chatUpstreamModel"],
  SVC_CHAT_UPSTREAM_API_KEY: ["local", "chatUpstreamApiKey"],
  SVC_ASR_UPSTREAM: ["local", "asrUpstream"],
  SVC_ASR_UPSTREAM_MODEL: ["local", "asrUpstreamModel"],
  SVC_ASR_UPSTREAM_API_KEY: ["local", "asrUpstreamApiKey"],
  SVC_TTS_UPSTREAM: ["local", "ttsUpstream"],
  SVC_TTS_UPSTREAM_MODEL: ["local", "ttsUpstreamModel"],
  SVC_TTS_UPSTREAM_API_KEY: ["local", "ttsUpstreamApiKey"],
  SVC_TTS_UPSTREAM_VOICES: ["local", "ttsUpstreamVoices"],
  SVC_SPEECH_UPSTREAM_TIMEOUT_MS: ["local", "speechUpstreamTimeoutMs"],
  SVC_SCRIPTED_AGENT: ["local", "scriptedAgent"],
  SVC_SCRIPTED_PACE_MS: ["local", "scriptedPaceMs"],
  SVC_ENGINE_PROFILE: ["local", "engineProfile"],
  SVC_IMAGE_BLOCKLIST: ["local", "imageBlocklist"],
  TWILIO_ACCOUNT_SID: ["twilio", "accountSid"],
  TWILIO_AUTH_TOKEN: ["twilio", "authToken"],
  SIP_PORT: ["sip", "port"],
  SIP_HOST: ["sip", "host"],
  SIP_PUBLIC_IP: ["sip", "publicIp"],
  RTP_PORTS: ["sip", "rtpPorts"],
  SIP_CODECS: ["sip", "codecs"],
  SIP_MEDIA_TIMEOUT_S: ["sip", "mediaTimeoutS"],
  SIP_RTP_THREAD: ["sip", "rtpThread"],
  SIP_ALLOW_FROM: ["sip", "allowFrom"],
  SIP_RATE_LIMIT: ["sip", "rateLimit"],
  SIP_USERS: ["sip", "users"],
  SIP_DIGEST_ALGORITHMS: ["sip", "digestAlgorithms"],
  SIP_REGISTER: ["sip", "registrations"],
  SIP_TLS_PORT: ["sip", "tlsPort"],
  SIP_TLS_CERT: ["sip", "tlsCert"],
  SIP_TLS_KEY: ["sip", "tlsKey"],
  SIP_TLS_VERIFY: ["sip", "tlsVerify"],
  SIP_SRTP: ["sip", "srtp"],
  ...OUTBOUND_ENV_KEYS,
  AUDIOSOCKET_PORT: ["audiosocket", "port"],
  AUDIOSOCKET_HOST: ["audiosocket", "host"],
  DISCORD_TOKEN: ["discord", "token"],
  DISCORD_API_BASE: ["discord", "apiBase"],
  DISCORD_AUTO_JOIN: ["discord", "autoJoin"],
  DISCORD_RESPOND_TO: ["discord", "respondTo"],
  DISCORD_AGENT_NAME: ["discord", "agentName"],
  DISCORD_TEXT_LOG: ["discord", "textLog"],
  DISCORD_SHARDS: ["discord", "shards"],
  CALL_REPORT_URL: ["callReports", "url"],
  CALL_REPORT_SECRET: ["callReports", "secret"],
  CALL_REPORT_DIR: ["callReports", "dir"],
  BRIDGE_INSTANCE: ["store", "instance"],
  DATABASE_URL: ["store", "databaseUrl"],
  STORE_LOST_AFTER_SECONDS: ["store", "lostAfterSeconds"],
  LOG_LEVEL: ["log", "level"],
  LOG_FORMAT: ["log", "format"],
};

export class ConfigError extends Error {
  override name = "ConfigError";
}

type Tree = { [k: string]: unknown };

function setPath(tree: Tree, path: readonly string[], value: unknown): void {
  let node = tree;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    node[key] = typeof next === "object" && next !== null ? next : {};
    node = node[key] as Tree;
  }
  node[path[path.length - 1]!] = value;
}

function readConfigFile(file: string): Tree {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError(`config file ${file}: cannot read it (${(err as Error).message})`);
  }
  let parsed: unknown;
  try {
    parsed = file.endsWith(".json") ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new ConfigError(
      `config file ${file}: not valid ${file.endsWith(".json") ? "JSON" : "YAML"}: ${(err as Error).message}`,
    );
  }
  if (parsed == null) return {};
  if (typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new ConfigError(
      `config file ${file}: expected a mapping of sections (${Object.keys(configSchema.shape).join(", ")})`,
    );
  }
  return parsed as Tree;
}

/** Strings "true"/"false"/"1"/"0" for booleans from the environment (z.coerce.boolean treats "false" as true). */
function envValue(raw: string): unknown {
  if (/^(true|yes|on)$/i.test(raw)) return true;
  if (/^(false|no|off)$/i.test(raw)) return false;
  return raw;
}

export interface LoadOptions {
  file?: string | undefined;
  env?: NodeJS.ProcessEnv;
  /** Highest precedence: values from command-line flags. */
  overrides?: Tree;
  /** The configuration itself, in place of a file (the TypeScript API's options), named `name`. */
  given?: { tree: Tree; name: string };
}

export function loadConfig(opts: LoadOptions = {}): Config {
  const env = opts.env ?? process.env;
  const file = opts.given ? opts.given.name : (opts.file ?? env.VOICE_BRIDGE_CONFIG);
  const tree: Tree = opts.given ? structuredClone(opts.given.tree) : file ? readConfigFile(file) : {};
  // Where each key set outside the file came from, so an error points at what the user wrote.
  const origin = new Map<string, string>();
  // With the default agent written as agents.default, AGENT_* variables set its keys there.
  const defaultInAgents = isTree(tree.agents) && tree.agents.default !== undefined;
  for (const [name, envPath] of Object.entries(ENV_KEYS)) {
    const raw = env[name];
    if (raw === undefined || raw === "") continue;
    const path =
      defaultInAgents && envPath[0] === "agent" && !BRIDGE_WIDE_AGENT_KEYS.has(envPath[1]!)
        ? ["agents", "default", ...envPath.slice(1)]
        : envPath;
    setPath(tree, path, envValue(raw));
    origin.set(path.join("."), `environment variable ${name}`);
  }
  for (const [dotted, value] of Object.entries(flatten(opts.overrides ?? {}))) {
    setPath(tree, dotted.split("."), value);
    origin.set(dotted, `option --${dotted.split(".").pop()}`);
  }
  const result = configSchema.safeParse(tree);
  const issues: Array<{ path: PropertyKey[]; message: string }> = result.success
    ? []
    : [...result.error.issues];
  for (const key of unknownKeys(configSchema, tree))
    issues.push({ path: key.path, message: unknownKeyMessage(key) });
  if (
    defaultInAgents &&
    isTree(tree.agent) &&
    Object.keys(tree.agent).some((k) => !BRIDGE_WIDE_AGENT_KEYS.has(k))
  )
    issues.push({
      path: ["agents", "default"],
      message: "the default agent is set twice (agent: and agents.default): keep one",
    });
  issues.push(...routeProblems(tree));
  if (result.success && issues.length === 0) return result.data;
  const problems = issues.map((issue) => {
    const key = issue.path.join(".");
    // A list item's problem ("sip.codecs.0") came from where the list was set.
    const set = issue.path.map((_, i) => issue.path.slice(0, issue.path.length - i).join("."));
    const where = set.map((k) => origin.get(k)).find((w) => w !== undefined);
    const label = where ? `${where} (${key})` : file ? `${file}: ${key}` : key;
    return `  - ${label}: ${issue.message}`;
  });
  throw new ConfigError(`invalid configuration:\n${problems.join("\n")}`);
}

/** Keys of the `agent:` block that are the bridge's, not the default agent's. */
const BRIDGE_WIDE_AGENT_KEYS = new Set(["transcriptDir", "recordingDir"]);

/** Routes to agents that do not exist (a typo would send their calls nowhere). */
function routeProblems(tree: Tree): Array<{ path: PropertyKey[]; message: string }> {
  if (!Array.isArray(tree.routes)) return [];
  const names = new Set(["default", ...(isTree(tree.agents) ? Object.keys(tree.agents) : [])]);
  return tree.routes.flatMap((r: unknown, i) =>
    isTree(r) && typeof r.agent === "string" && !names.has(r.agent)
      ? [
          {
            path: ["routes", i, "agent"],
            message: `no agent named "${r.agent}"; agents: ${[...names].join(", ")}`,
          },
        ]
      : [],
  );
}

function isTree(v: unknown): v is Tree {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function flatten(tree: Tree, prefix = ""): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(tree)) {
    if (v === undefined) continue;
    const key = prefix ? `${prefix}.${k}` : k;
    if (typeof v === "object" && v !== null && !Array.isArray(v)) Object.assign(out, flatten(v as Tree, key));
    else out[key] = v;
  }
  return out;
}

/** True when the bridge should start and use the embedded local service. */
export function usesLocalService(config: Config): boolean {
  return !config.service.baseUrl && !config.service.apiKey;
}

/** Whether the bridge serves the console and browser calls: as configured, else with the local service. */
export function consoleEnabled(config: Config): boolean {
  return config.console.enabled ?? usesLocalService(config);
}
