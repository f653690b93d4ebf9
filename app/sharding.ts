// `voice-bridge start --shards N|auto`: discord.js's ShardingManager forks one bridge process per
// shard (`voice-bridge start` again, with SHARDS/SHARD_COUNT in its environment, which discord.js's
// Client reads by itself), each owning its guilds' conversations. This process, the manager, takes
// no calls: it runs the embedded local service once (when no SVC_BASE_URL/SVC_API_KEY is set) and
// hands its URL and key to every shard, so N shards do not load N recognizers. Shard i serves
// /healthz, /metrics and /calls/:id on PORT + i (PORT 0: each an ephemeral port, logged).
import { fileURLToPath } from "node:url";
import { REST, Routes, ShardingManager } from "discord.js";
import { loginProblem } from "../bridges/discord/login-problems.ts";
import { type Config, usesLocalService } from "../src/config/config.ts";
import type { Logger } from "../src/core/log.ts";

const CLI = fileURLToPath(new URL(`./cli.${import.meta.url.endsWith(".ts") ? "ts" : "js"}`, import.meta.url));

/** The shard this process is, when a ShardingManager started it. */
export function shardOfThisProcess(env: NodeJS.ProcessEnv = process.env): number | undefined {
  if (!env.SHARDING_MANAGER || env.SHARDS === undefined) return undefined;
  const id = Number(env.SHARDS);
  return Number.isInteger(id) && id >= 0 ? id : undefined;
}

/** The HTTP port of shard `shard` (each needs its own; 0 stays 0: ephemeral). */
export function shardPort(basePort: number, shard: number): number {
  return basePort === 0 ? 0 : basePort + shard;
}

/**
 * What this process's configuration takes over the file and environment when it is a shard:
 * shards serve Discord only, as N processes cannot all bind the SIP and AudioSocket ports. Those
 * transports run from an unsharded `voice-bridge start` without DISCORD_TOKEN (docs/discord.md).
 */
export function shardOverrides(env: NodeJS.ProcessEnv = process.env): {
  sip?: { port: "off" };
  audiosocket?: { port: "off" };
} {
  return shardOfThisProcess(env) === undefined ? {} : { sip: { port: "off" }, audiosocket: { port: "off" } };
}

export interface ShardRun {
  readonly manager: ShardingManager;
  close(): Promise<void>;
}

/** Starts the shards; resolves once all are spawned (or logs why they could not be). */
export async function runShards(config: Config, log: Logger): Promise<ShardRun | undefined> {
  const token = config.discord.token;
  if (!token) {
    log.error("Discord sharding needs DISCORD_TOKEN");
    return undefined;
  }
  let total: number;
  try {
    total = config.discord.shards === "auto" ? await recommendedShards(config) : (config.discord.shards ?? 1);
  } catch (err) {
    log.error(loginProblem(err, config.discord.apiBase, ["Guilds", "GuildVoiceStates"]));
    return undefined;
  }
  let closeService: (() => Promise<void>) | undefined;
  if (usesLocalService(config)) {
    const { serviceOptionsFromConfig, startLocalService } = await import("../src/service/index.ts");
    const service = await startLocalService({ ...serviceOptionsFromConfig(config.local), logger: log });
    // Shards inherit this process's environment: they talk to this one service.
    process.env.SVC_BASE_URL = service.url;
    process.env.SVC_API_KEY = service.apiKeys[0];
    closeService = () => service.close();
    log.info({ url: service.url }, "sharding: one embedded local service for every shard");
  }
  // Each shard turns SIP and AudioSocket off itself (shardOverrides).
  log.info("sharding: shard processes serve Discord only (SIP and AudioSocket off in them)");
  const manager = new ShardingManager(CLI, {
    token,
    totalShards: total,
    shardArgs: ["start"],
    execArgv: ["--experimental-strip-types", "--disable-warning=ExperimentalWarning", ...process.execArgv],
  });
  let stopping = false;
  manager.on("shardCreate", (shard) => {
    log.info({ shard: shard.id, of: total }, "shard process started");
    shard.on("death", () => {
      if (stopping) log.info({ shard: shard.id }, "shard process stopped");
      else log.warn({ shard: shard.id }, "shard process exited; the manager respawns it");
    });
  });
  try {
    await manager.spawn({ amount: total, timeout: 120_000 });
    log.info({ shards: total }, "all shards online");
  } catch (err) {
    log.error({ err }, "sharding: a shard did not come online (see its own log lines above)");
  }
  return {
    manager,
    async close() {
      stopping = true;
      for (const shard of manager.shards.values()) shard.kill();
      await closeService?.();
    },
  };
}

/** Discord's recommended shard count, asked of the configured API (GET /gateway/bot). */
async function recommendedShards(config: Config): Promise<number> {
  const rest = new REST({ api: config.discord.apiBase }).setToken(config.discord.token!);
  const body = (await rest.get(Routes.gatewayBot())) as { shards: number };
  return Math.max(1, body.shards);
}
