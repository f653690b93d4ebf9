// The bridge with a Discord that refuses the bot: a bad token (REST 401, gateway 4004) and an
// intent the application may not use (4014) each give one error line naming what to fix, and the
// bridge keeps serving (/healthz) with every other transport.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { type Bridge, startBridge } from "../../../app/bridge/start.ts";
import { loadConfig } from "../../../src/config/config.ts";
import { type RefusingDiscord, startRefusingDiscord } from "./refusing-discord.ts";

const TOKEN = "MTIz.valid.token";
interface Line {
  level: number;
  msg: string;
}

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

async function bridgeAgainst(
  discord: RefusingDiscord,
  token: string,
): Promise<{ bridge: Bridge; lines: Line[] }> {
  const dir = mkdtempSync(join(tmpdir(), "vb-discord-refusal-"));
  const lines: Line[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split("\n")) if (l) lines.push(JSON.parse(l) as Line);
      done();
    },
  });
  const config = loadConfig({
    env: {
      HOST: "127.0.0.1",
      PORT: "0",
      SIP_PORT: "off",
      SVC_LOCAL_DATA_DIR: dir,
      DISCORD_TOKEN: token,
      DISCORD_API_BASE: discord.apiBase,
    },
  });
  const bridge = await startBridge(config, pino({ level: "info" }, sink));
  cleanup.push(async () => {
    await bridge.close(0);
    rmSync(dir, { recursive: true, force: true });
  });
  return { bridge, lines };
}

async function healthy(bridge: Bridge): Promise<boolean> {
  const res = await fetch(`${bridge.url}/healthz`);
  return res.ok && ((await res.json()) as { status: string }).status === "ok";
}

const errors = (lines: Line[]) => lines.filter((l) => l.level >= 50 && l.msg.startsWith("Discord"));

describe("a Discord that refuses the bot", () => {
  it("a bad token: one line naming DISCORD_TOKEN, and the bridge keeps serving", {
    timeout: 120_000,
  }, async () => {
    const discord = await startRefusingDiscord({ validToken: TOKEN, closeOnIdentify: 4004 });
    cleanup.push(() => discord.close());
    const { bridge, lines } = await bridgeAgainst(discord, "not-the-token");
    expect(await bridge.discord!.ready).toBe(false);
    expect(errors(lines)).toHaveLength(1);
    expect(errors(lines)[0]!.msg).toMatch(/refused the bot token.*DISCORD_TOKEN/);
    expect(await healthy(bridge)).toBe(true);
  });

  it("a token the gateway refuses (4004): one line naming DISCORD_TOKEN", { timeout: 120_000 }, async () => {
    const discord = await startRefusingDiscord({ validToken: TOKEN, closeOnIdentify: 4004 });
    cleanup.push(() => discord.close());
    const { bridge, lines } = await bridgeAgainst(discord, TOKEN);
    expect(await bridge.discord!.ready).toBe(false);
    expect(discord.identifies).toHaveLength(1);
    expect(errors(lines)).toHaveLength(1);
    expect(errors(lines)[0]!.msg).toMatch(/4004.*DISCORD_TOKEN/);
    expect(await healthy(bridge)).toBe(true);
  });

  it("a disallowed intent (4014): one line naming the intents and where to enable them", {
    timeout: 120_000,
  }, async () => {
    const discord = await startRefusingDiscord({ validToken: TOKEN, closeOnIdentify: 4014 });
    cleanup.push(() => discord.close());
    const { bridge, lines } = await bridgeAgainst(discord, TOKEN);
    expect(await bridge.discord!.ready).toBe(false);
    // Guilds (1) | GuildVoiceStates (128): nothing privileged asked for.
    expect(discord.identifies.map((i) => i.intents)).toEqual([129]);
    expect(errors(lines)).toHaveLength(1);
    expect(errors(lines)[0]!.msg).toMatch(/4014.*Guilds, GuildVoiceStates.*developer portal/);
    expect(await healthy(bridge)).toBe(true);
  });
});
