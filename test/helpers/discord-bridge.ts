// The in-process bridge (embedded local service) logged in to a fake Discord, for the Discord e2e
// tests: its config, and its log lines when asked for.
import { join } from "node:path";
import { pino } from "pino";
import { type Bridge, startBridge } from "../../app/bridge/start.ts";
import { loadConfig } from "../../src/config/config.ts";
import type { FakeDiscord } from "../fake-discord/index.ts";

/**
 * Starts the bridge with the Discord bot against `fake` (data under `dataDir`), and waits for its
 * slash commands to be registered. With `lines`, the bridge's JSON log lines are collected there.
 */
export async function startDiscordBridge(opts: {
  fake: FakeDiscord;
  token: string;
  dataDir: string;
  greeting: string;
  lines?: string[];
}): Promise<Bridge> {
  const config = loadConfig({
    env: {
      HOST: "127.0.0.1",
      PORT: "0",
      SIP_PORT: "off",
      SVC_LOCAL_DATA_DIR: join(opts.dataDir, "data"),
      AGENT_GREETING: opts.greeting,
      DISCORD_TOKEN: opts.token,
      DISCORD_API_BASE: opts.fake.restApi,
    },
  });
  const lines = opts.lines;
  const log = lines
    ? pino({ level: "info" }, { write: (l: string) => void lines.push(l) })
    : pino({ level: process.env.E2E_LOG ?? "silent" });
  const bridge = await startBridge(config, log);
  await opts.fake.waitForRest((r) => r.method === "PUT" && r.path.endsWith("/commands"));
  return bridge;
}
