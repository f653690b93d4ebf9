// `voice-bridge start --shards 2`: the manager forks two bridge processes, each identifies as its
// own shard of two, and the shard that owns the server registers its commands and answers /join's
// refusal there. The manager runs the one embedded local service the shards share.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "../../helpers/until.ts";
import { startTextGateway, type TextGateway } from "./text-gateway.ts";

const ROOT = join(import.meta.dirname, "../../..");
let dir: string;
let gateway: TextGateway;
let manager: ChildProcess;
const log: Array<{ pid: number; msg: string; shard?: number }> = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-discord-shards-"));
  gateway = await startTextGateway({ botDenied: 0n });
  manager = spawn(join(ROOT, "bin/voice-bridge"), ["start", "--shards", "2"], {
    env: {
      ...process.env,
      HOST: "127.0.0.1",
      PORT: "0",
      SIP_PORT: "off",
      LOG_FORMAT: "json",
      SVC_LOCAL_DATA_DIR: join(dir, "data"),
      DISCORD_TOKEN: "MTIz.test.token",
      DISCORD_API_BASE: gateway.apiBase,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  for (const s of [manager.stdout!, manager.stderr!]) {
    // A chunk may end inside a line: the rest of it comes with the next.
    let partial = "";
    s.on("data", (b: Buffer) => {
      const lines = (partial + b.toString()).split("\n");
      partial = lines.pop()!;
      for (const l of lines) {
        if (!l.startsWith("{")) continue;
        log.push(JSON.parse(l) as (typeof log)[number]);
      }
      if (process.env.E2E_LOG) process.stderr.write(b);
    });
  }
  // The manager's line and the shards' own come from three processes: any may be read first.
  await until(
    () =>
      log.some((l) => l.msg === "all shards online") &&
      log.filter((l) => l.msg === "Discord bot online").length >= 2,
    "both shards online",
    150_000,
  );
}, 180_000);

afterAll(async () => {
  if (manager && manager.exitCode === null) {
    const exited = new Promise((r) => manager.once("exit", r));
    manager.kill("SIGTERM");
    await exited;
  }
  await gateway?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("sharding", () => {
  it("runs one bridge process per shard, each identifying as its shard", () => {
    expect(gateway.identifies.map((s) => s?.join("/")).sort()).toEqual(["0/2", "1/2"]);
    const online = log.filter((l) => l.msg === "Discord bot online");
    expect(online).toHaveLength(2);
    expect(new Set(online.map((l) => l.pid)).size).toBe(2);
    expect(online.every((l) => l.pid !== manager.pid)).toBe(true);
  });

  it("shares the manager's one embedded local service", () => {
    expect(log.filter((l) => l.msg.startsWith("sharding: one embedded local service"))).toHaveLength(1);
    expect(log.filter((l) => l.msg.startsWith("service: embedded local service"))).toHaveLength(0);
  });

  it("the shard owning the server registers its commands and answers them", { timeout: 60_000 }, async () => {
    await until(() => gateway.commands.size === 1, "commands registered", 90_000);
    const [reply] = await gateway.command("leave", false);
    expect(reply!.body.data!.content).toMatch(/not in a voice channel/);
  });
});
