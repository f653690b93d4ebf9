// A scenario set made ready to run, before any bridge starts: its agents imported, its config file
// read, its WAV files loaded, and the bridge's configuration checked, so that every mistake in
// the file (a missing module, a wrong setting, a missing recording) stops the run up front,
// named by file and key.
import { dirname, resolve } from "node:path";
import type { AgentCode } from "../../../src/agents/code.ts";
import { type Config, ConfigError, loadConfig, readConfigFile } from "../../../src/config/config.ts";
import type { SimAudio } from "../../../tools/twilio-sim/simulate.ts";
import { type AgentDefinition, splitAgent } from "../define-agent.ts";
import { importAgent } from "./agent-module.ts";
import { readCallerAudio } from "./caller.ts";
import {
  type CheckedSet,
  checkScenarioSet,
  readScenarioFile,
  ScenarioFileError,
  type ScenarioSet,
} from "./scenario.ts";

type Tree = Record<string, unknown>;

export interface PreparedSet {
  /** The file as given, or the set's name. */
  name: string;
  set: CheckedSet;
  /** The bridge's settings but for what each run fills in (ports, Twilio, the data directory). */
  tree: Tree;
  /** The tools and hooks of agents defined in code, by agent name. */
  code: Map<string, AgentCode>;
  /** The WAV files of the caller's lines, by the name the file gives. */
  audio: Map<string, SimAudio>;
}

/** What a run gives each bridge: where it keeps its data, and the Twilio account it answers for. */
export interface BridgeRuntime {
  /** The environment: its SVC_* variables choose the service (SVC_BASE_URL / SVC_API_KEY) and the local engines. */
  env: Readonly<Record<string, string | undefined>>;
  dataDir: string;
  twilio: { accountSid: string; authToken: string; apiBase: string };
}

const isTree = (v: unknown): v is Tree => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * What of a config file stays out of a test's bridge: other ways in (SIP, Discord, AudioSocket),
 * its public URL (Twilio's webhooks would point there), and whatever reaches outside or lasts
 * (PostgreSQL, end-of-call reports, recording and transcript folders).
 */
function confine(tree: Tree): Tree {
  const out: Tree = { ...tree };
  for (const key of ["sip", "discord", "audiosocket", "callReports"]) delete out[key];
  if (isTree(out.server)) out.server = { ...out.server, publicUrl: undefined };
  if (isTree(out.store)) out.store = { ...out.store, databaseUrl: undefined };
  if (isTree(out.agent)) out.agent = { ...out.agent, recordingDir: undefined, transcriptDir: undefined };
  return out;
}

/** Runs `step`; what it throws becomes the file's error at `where`. */
async function at<T>(name: string, where: string, step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    throw new ScenarioFileError(name, [`${where}: ${(err as Error).message}`]);
  }
}

/** An agent's settings and code, from a module's export or as given. */
function agentOf(name: string, where: string, source: string | AgentDefinition, dir: string) {
  return at(name, where, async () =>
    splitAgent(typeof source === "string" ? await importAgent(source, dir) : source),
  );
}

/** The set's agents over the config file's, its hotwords and scripted rules. */
async function bridgeTree(
  name: string,
  set: CheckedSet,
  dir: string,
  baseConfig: string | undefined,
): Promise<{ tree: Tree; code: Map<string, AgentCode> }> {
  const file = set.config !== undefined ? resolve(dir, set.config) : baseConfig;
  const tree = file === undefined ? {} : await at(name, "config", () => confine(readConfigFile(file)));
  const code = new Map<string, AgentCode>();
  if (set.agent !== undefined) {
    const split = await agentOf(name, "agent", set.agent, dir);
    tree.agent = split.settings;
    code.set("default", split.code);
    if (isTree(tree.agents)) delete tree.agents.default;
  }
  for (const [agent, source] of Object.entries(set.agents ?? {})) {
    const split = await agentOf(name, `agents.${agent}`, source, dir);
    tree.agents = { ...(isTree(tree.agents) ? tree.agents : {}), [agent]: split.settings };
    code.set(agent, split.code);
  }
  if (set.hotwords) tree.service = { ...(isTree(tree.service) ? tree.service : {}), hotwords: set.hotwords };
  if (set.scripted !== undefined)
    tree.local = { ...(isTree(tree.local) ? tree.local : {}), scriptedAgent: resolve(dir, set.scripted) };
  return { tree, code };
}

/** The configuration of a set's bridge in a run: loopback HTTP, Twilio only (answering for `runtime`'s account). */
export function bridgeConfig(p: PreparedSet, runtime: BridgeRuntime): Config {
  const { env, twilio } = runtime;
  // The service's variables, but for those the set itself sets.
  const own = new Set(["SVC_LOCAL_DATA_DIR", ...(p.set.hotwords ? ["SVC_HOTWORDS"] : [])]);
  if (p.set.scripted !== undefined) own.add("SVC_SCRIPTED_AGENT");
  const service = Object.entries(env).filter(([k, v]) => k.startsWith("SVC_") && !own.has(k) && v);
  return loadConfig({
    env: {
      ...Object.fromEntries(service),
      HOST: "127.0.0.1",
      PORT: "0",
      SIP_PORT: "off",
      CONSOLE_ENABLED: "false",
      SVC_LOCAL_DATA_DIR: runtime.dataDir,
      TWILIO_ACCOUNT_SID: twilio.accountSid,
      TWILIO_AUTH_TOKEN: twilio.authToken,
      TWILIO_API_BASE: twilio.apiBase,
    },
    given: { tree: p.tree, name: p.name },
  });
}

export interface PrepareOptions {
  /** The config file of sets that give none of their own (the CLI's --config). */
  config?: string | undefined;
  /** Where a set given in code has its relative paths from. */
  dir: string;
  env: BridgeRuntime["env"];
}

/** Reads, checks and loads one set; throws a ScenarioFileError naming every problem found. */
export async function prepareSet(
  source: string | ScenarioSet,
  options: PrepareOptions,
): Promise<PreparedSet> {
  const name = typeof source === "string" ? source : (source.name ?? "scenarios");
  const set = typeof source === "string" ? await readScenarioFile(source) : checkScenarioSet(source, name);
  const dir = typeof source === "string" ? dirname(resolve(source)) : options.dir;
  const base = options.config !== undefined ? resolve(options.config) : undefined;
  const { tree, code } = await bridgeTree(name, set, dir, base);
  const prepared: PreparedSet = { name, set, tree, code, audio: await readCallerAudio(set, dir, name) };
  try {
    bridgeConfig(prepared, {
      env: options.env,
      dataDir: dir,
      twilio: { accountSid: `AC${"0".repeat(32)}`, authToken: "check", apiBase: "http://127.0.0.1:9" },
    });
  } catch (err) {
    if (err instanceof ConfigError) throw new ScenarioFileError(name, [err.message]);
    throw err;
  }
  return prepared;
}
