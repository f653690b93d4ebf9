// One configuration for the whole program: defaults, then an optional config file
// (YAML or JSON), then environment variables, validated once at start-up. Errors name
// the key (as the user wrote it: file path or env variable) and say what is expected.
// Each section's schema (its keys, defaults, descriptions and environment variables) is in a
// file of its own beside this one; this file puts them together and reads the sources.
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { agentName, agentSchema, defaultAgentSchema } from "./agent.ts";
import { audiosocketSchema } from "./audiosocket.ts";
import { callReportsSchema } from "./call-reports.ts";
import { campaignsSchema } from "./campaigns.ts";
import { consoleSchema } from "./console.ts";
import { discordSchema } from "./discord.ts";
import { envTable, envVariables } from "./env.ts";
import { handoffProblems } from "./handoffs.ts";
import { localSchema } from "./local.ts";
import { logSchema } from "./log.ts";
import { outboundSchema } from "./outbound.ts";
import { routeSchema, webhookSchema } from "./routes.ts";
import { serverSchema } from "./server.ts";
import { serviceSchema } from "./service.ts";
import { sipSchema } from "./sip.ts";
import { storeSchema } from "./store.ts";
import { tracingSchema } from "./tracing.ts";
import { twilioSchema } from "./twilio.ts";
import { unknownKeyMessage, unknownKeys } from "./unknown-keys.ts";

export const configSchema = z.object({
  server: serverSchema,
  console: consoleSchema,
  service: serviceSchema,
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
  local: localSchema,
  twilio: twilioSchema,
  sip: sipSchema,
  outbound: outboundSchema,
  campaigns: campaignsSchema,
  audiosocket: audiosocketSchema,
  discord: discordSchema,
  callReports: callReportsSchema,
  store: storeSchema,
  log: logSchema,
  tracing: tracingSchema,
});

export type Config = z.infer<typeof configSchema>;

/** Environment variables and the config path each one sets, as the sections' schemas declare them. */
export const ENV_KEYS = envTable(envVariables(configSchema));

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

/** A config file's sections as written (YAML or JSON), before any check. */
export function readConfigFile(file: string): Tree {
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
  issues.push(...handoffProblems(tree));
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
export function usesLocalService(config: Pick<Config, "service">): boolean {
  return !config.service.baseUrl && !config.service.apiKey;
}

/** Whether the bridge serves the console and browser calls: as configured, else with the local service. */
export function consoleEnabled(config: Config): boolean {
  return config.console.enabled ?? usesLocalService(config);
}
