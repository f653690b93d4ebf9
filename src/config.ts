// One configuration for the whole program: defaults, then an optional config file
// (YAML or JSON), then environment variables, validated once at start-up. Errors name
// the key (as the user wrote it: file path or env variable) and say what is expected.
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { routeSchema, webhookSchema } from "./agents/routes.ts";
import { agentName, agentSchema, defaultAgentSchema } from "./agents/schema.ts";
import { flag, httpUrl, port, url } from "./config-values.ts";
import { OUTBOUND_ENV_KEYS, outboundSchema } from "./outbound/config.ts";
import {
  allowFromSchema,
  digestAlgorithmsSchema,
  rateLimitSchema,
  registrationsSchema,
  srtpSchema,
  tlsPortSchema,
  usersSchema,
} from "./sip-access-config.ts";
import { unknownKeyMessage, unknownKeys } from "./unknown-keys.ts";

export const configSchema = z.object({
  server: z
    .object({
      host: z.string().min(1).default("0.0.0.0"),
      port: port.default(8080),
      /** Public https URL of this bridge, as Twilio reaches it (for TwiML and signatures). */
      publicUrl: url.optional(),
      /**
       * Bearer token people need for the bridge's own pages and records: the console, its live feed,
       * browser calls, /calls and recordings (Twilio's routes have their signature; probes and
       * /metrics stay open). Unset: a random token is made at first start and kept in
       * <local.dataDir>/bridge-token (mode 600). `off`: no token asked, on purpose.
       */
      token: z
        .preprocess(
          (v) => (v === false ? "off" : v),
          z.union([
            z.literal("off"),
            z.string().min(16, { error: 'expected a token of at least 16 characters, or "off"' }),
          ]),
        )
        .optional(),
    })
    .prefault({}),
  console: z
    .object({
      /**
       * The live console at / and browser calls (WS /browser/call). Unset: on with the embedded local
       * service (the offline demo), off with a hosted service.
       */
      enabled: z.boolean({ error: "expected true or false" }).optional(),
    })
    .prefault({}),
  service: z
    .object({
      /** Hosted service; when absent (with no api key) the embedded local service is used. */
      baseUrl: url.optional(),
      apiKey: z.string().min(1).optional(),
      /** Use the subscription plan tier paths (/svc_plan/v1) for the speech endpoints. */
      planTier: z.coerce.boolean().default(false),
      chatModel: z.string().min(1).default("svc-3.5-flash"),
      ttsModel: z.string().min(1).default("svc-tts-2"),
      asrModel: z.string().min(1).default("svcaudio-2.5-asr"),
      /** Voice id for the agent (an official voice, or a cloned voice id with voiceLabel). */
      voice: z.string().min(1).default("en_female_aria"),
      /** Recognition language and hotwords that bias it (product names, menu words). */
      language: z.string().min(1).default("en"),
      hotwords: z
        .union([z.string(), z.array(z.string())])
        .transform((v) => (Array.isArray(v) ? v : v.split(",")).map((k) => k.trim()).filter(Boolean))
        .default([]),
    })
    .prefault({}),
  /** The agent named `default`: it takes every call no route gives to another (see src/agents). */
  agent: defaultAgentSchema.prefault({}),
  /** More agents by name; a route or the call-start webhook picks one per call. */
  agents: z.record(agentName, agentSchema).default({}),
  /** Which agent takes a call: the first route that matches, else `default`. */
  routes: z.array(routeSchema).default([]),
  /** Asked at the start of every call (unless its route has its own): agent, variables, overrides. */
  agentWebhook: webhookSchema.optional(),
  local: z
    .object({
      host: z.string().min(1).default("127.0.0.1"),
      port: port.default(0),
      dataDir: z.string().min(1).default(".data"),
      /** Comma-separated keys the local service accepts; empty → one dev key kept in dataDir. */
      apiKeys: z
        .union([z.string(), z.array(z.string())])
        .transform((v) => (Array.isArray(v) ? v : v.split(",")).map((k) => k.trim()).filter(Boolean))
        .default([]),
      /** Chat engine behind E1–E3: the scripted demo agent, or an OpenAI-compatible upstream. */
      chatEngine: z.enum(["scripted", "openai-compatible"]).optional(),
      /** Base URL of a chat-completions server (…/v1) for the openai-compatible engine. */
      chatUpstream: url.optional(),
      /** Model name sent upstream (upstreams do not know the svc-* names). */
      chatUpstreamModel: z.string().min(1).optional(),
      chatUpstreamApiKey: z.string().min(1).optional(),
      /**
       * Server (root or …/v1) that speaks OpenAI's audio API for recognition: E6 is forwarded to its
       * /v1/audio/transcriptions (faster-whisper, whisper.cpp servers) instead of PocketSphinx.
       */
      asrUpstream: httpUrl.optional(),
      /** Model name sent to the recognition upstream (default whisper-1). */
      asrUpstreamModel: z.string().min(1).optional(),
      asrUpstreamApiKey: z.string().min(1).optional(),
      /** Server (root or …/v1) for synthesis: E4 and E5 through its /v1/audio/speech (Kokoro, Piper servers). */
      ttsUpstream: httpUrl.optional(),
      /** Model name sent to the speech upstream (default tts-1). */
      ttsUpstreamModel: z.string().min(1).optional(),
      ttsUpstreamApiKey: z.string().min(1).optional(),
      /** Service voice id → upstream voice, `id=voice` comma-separated; `*=voice` for the rest (default alloy). */
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
        .optional(),
      /** Longest wait for a speech upstream's answer to start or continue, ms (then the request fails). */
      speechUpstreamTimeoutMs: z.coerce.number().int().min(100).max(600_000).default(30_000),
      /** YAML file of the scripted agent; default: the demo hotline shipped with the project. */
      scriptedAgent: z.string().min(1).optional(),
      /** Milliseconds between streamed words of the scripted engine (0: as fast as possible). */
      scriptedPaceMs: z.coerce.number().min(0).max(10_000).default(15),
      /**
       * Engines behind the speech and chat endpoints. `synthetic` is for benchmarks only: tones for
       * speech, a fixed transcript, the scripted agent at zero pace (see README "Benchmarks").
       */
      engineProfile: z.enum(["standard", "synthetic"]).default("standard"),
      /** Comma-separated words and phrases that stop an image prompt (E7/E8 content_filtered); unset → built-in list. */
      imageBlocklist: z
        .union([z.string(), z.array(z.string())])
        .transform((v) => (Array.isArray(v) ? v : v.split(",")).map((k) => k.trim()).filter(Boolean))
        .optional(),
    })
    .prefault({}),
  twilio: z
    .object({
      /** Account SID (AC…); with authToken it enables hang-up and transfer through the REST API. */
      accountSid: z
        .string()
        .regex(/^AC[0-9a-fA-F]{32}$/, { error: "expected an Account SID: AC followed by 32 hex digits" })
        .optional(),
      /** Auth token: checks X-Twilio-Signature on the voice webhook and the media WebSocket. */
      authToken: z.string().min(1).optional(),
    })
    .prefault({}),
  sip: z
    .object({
      /** SIP signalling port (UDP and TCP); false (`off`) disables SIP. */
      port: z.union([z.literal(false), z.literal("off").transform(() => false as const), port]).default(5060),
      /** Address SIP and RTP bind to. */
      host: z.string().min(1).default("0.0.0.0"),
      /** Address advertised in Contact and SDP when the bridge is behind NAT. */
      publicIp: z.ipv4({ error: "expected an IPv4 address such as 203.0.113.7" }).optional(),
      /** RTP port range, "LOW-HIGH" (even ports are used for RTP). */
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
        .default("10000-20000"),
      /** Codecs offered and accepted, in preference order. */
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
        .default(["opus", "pcmu", "pcma"]),
      /** Hang up when no RTP arrives for this long, seconds. */
      mediaTimeoutS: z.coerce.number().int().min(1).max(3600).default(30),
      /**
       * Where the calls' RTP is received and decoded: `worker`, a thread of its own whose loop does
       * nothing but packets (on time while the sessions are busy), or `main`, the bridge's own
       * thread. Either way the agent's packets leave from the native send thread.
       */
      rtpThread: z.enum(["worker", "main"], { error: "expected worker or main" }).default("worker"),
      /**
       * Sources (CIDR ranges) that may send requests; others get 403. Default: loopback and the
       * private ranges; `any` opens it to everyone. Registrars and outbound proxies are added.
       */
      allowFrom: allowFromSchema,
      /** Requests per second each source may send outside calls; a flood beyond it is dropped. 0: no limit. */
      rateLimit: rateLimitSchema,
      /** `user:password` pairs; when set, every new INVITE must pass HTTP digest authentication. */
      users: usersSchema,
      /** Digest algorithms offered with sip.users, in order of preference (MD5, SHA-256). */
      digestAlgorithms: digestAlgorithmsSchema,
      /** Accounts the bridge registers with: `sip:user:password@registrar[:port][;transport=…][;expires=N]`. */
      registrations: registrationsSchema,
      /** SIP over TLS on this port (5061 by convention); off unless set. Needs tlsCert and tlsKey. */
      tlsPort: tlsPortSchema,
      /** PEM certificate (chain) and key for TLS; read again on SIGHUP. */
      tlsCert: z.string().min(1).optional(),
      tlsKey: z.string().min(1).optional(),
      /** Check the certificate chain and name of TLS peers we connect to (registrars); false only for tests. */
      tlsVerify: flag.default(true),
      /** SDES-SRTP: off, optional (take it when the caller offers it) or required (plain RTP gets 488). */
      srtp: srtpSchema,
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
    }),
  /** Calls the bridge places (POST /calls, voice-bridge dial): limits, defaults, carriers. */
  outbound: outboundSchema,
  audiosocket: z
    .object({
      /** Asterisk AudioSocket TCP port; unset or false (`off`) disables it. */
      port: z
        .union([z.literal(false), z.literal("off").transform(() => false as const), port])
        .default(false),
      host: z.string().min(1).default("0.0.0.0"),
    })
    .prefault({}),
  discord: z
    .object({
      /** Bot token; the Discord bot runs whenever it is set. */
      token: z.string().min(1).optional(),
      /** Base URL of Discord's API (REST; the gateway URL comes from /gateway/bot). */
      apiBase: url.default("https://discord.com/api"),
      /** Voice channel ids joined at start (comma-separated in the environment). */
      autoJoin: z
        .union([z.string(), z.array(z.string())])
        .transform((v) => (Array.isArray(v) ? v : v.split(",")).map((k) => k.trim()).filter(Boolean))
        .pipe(
          z.array(z.string().regex(/^\d{15,21}$/, { error: "expected a channel id (a snowflake: digits)" })),
        )
        .default([]),
      /** `all`: answer every turn; `mention`: only turns that address the agent by name. */
      respondTo: z.enum(["all", "mention"]).default("all"),
      /** The name members call the agent by (mention mode); default: the bot's user name. */
      agentName: z.string().min(1).optional(),
      /** Post the conversation to the voice channel's text chat as it happens. */
      textLog: z.coerce.boolean().default(false),
      /** Shard processes: a number, or `auto` (Discord's recommendation); unset runs one process. */
      shards: z.union([z.literal("auto"), z.coerce.number().int().min(1).max(1000)]).optional(),
    })
    .prefault({}),
  callReports: z
    .object({
      /** Each ended call's record is POSTed here (JSON, signed with `secret`); unset: no reports. */
      url: url.optional(),
      /** Shared secret of the HMAC-SHA256 signature; required with `url`. */
      secret: z.string().min(16, { error: "expected a secret of at least 16 characters" }).optional(),
      /** Reports wait here until delivered; default: <local.dataDir>/call-reports. */
      dir: z.string().min(1).optional(),
    })
    .prefault({})
    .superRefine((v, ctx) => {
      if (v.url && !v.secret)
        ctx.addIssue({
          code: "custom",
          path: ["secret"],
          message: "required when callReports.url (CALL_REPORT_URL) is set: set CALL_REPORT_SECRET",
        });
    }),
  store: z
    .object({
      /**
       * PostgreSQL for call records (postgres://user:password@host:5432/database), shared by every
       * bridge on it. Unset: SQLite in <local.dataDir>/voice-bridge.db.
       */
      databaseUrl: z
        .string()
        .regex(/^postgres(ql)?:\/\/\S+$/, {
          error: "expected a postgres://user:password@host:5432/database URL",
        })
        .optional(),
      /** This bridge's name in the records and the console (several bridges on one database). Default: the host name. */
      instance: z.string().min(1).max(64).optional(),
      /**
       * PostgreSQL: a bridge silent this long is lost (killed, its machine gone); the next bridge
       * that notices ends its live calls with reason `instance lost`. Each bridge says it is alive
       * six times in this period.
       */
      lostAfterSeconds: z.coerce.number().min(1).max(3600).default(30),
      /** Ended calls kept in memory for the console and reports (the live ones always are). */
      keepEnded: z.coerce.number().int().min(0).max(100_000).default(200),
    })
    .prefault({}),
  log: z
    .object({
      level: z.enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"]).default("info"),
      format: z.enum(["auto", "pretty", "json"]).default("auto"),
    })
    .prefault({}),
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
}

export function loadConfig(opts: LoadOptions = {}): Config {
  const env = opts.env ?? process.env;
  const file = opts.file ?? env.VOICE_BRIDGE_CONFIG;
  const tree: Tree = file ? readConfigFile(file) : {};
  // Where each key set outside the file came from, so an error points at what the user wrote.
  const origin = new Map<string, string>();
  for (const [name, path] of Object.entries(ENV_KEYS)) {
    const raw = env[name];
    if (raw === undefined || raw === "") continue;
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
    isTree(tree.agents) &&
    tree.agents.default !== undefined &&
    isTree(tree.agent) &&
    Object.keys(tree.agent).some((k) => k !== "transcriptDir" && k !== "recordingDir")
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
