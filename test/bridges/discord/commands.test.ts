// The bot in the real bridge against a gateway with one server: /join and /leave are registered for
// the server as it arrives; /join answers ephemerally, and a voice channel where the bot's role is
// denied Connect gives the member that reason and the operator one log line.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { PermissionFlagsBits } from "discord.js";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bridge, startBridge } from "../../../app/bridge/start.ts";
import { loadConfig } from "../../../src/config/config.ts";
import { until } from "../../helpers/until.ts";
import { GUILD_ID, startTextGateway, type TextGateway } from "./text-gateway.ts";

interface Line {
  level: number;
  msg: string;
}
const EPHEMERAL = 64;
let gateway: TextGateway;
let bridge: Bridge;
let dir: string;
const lines: Line[] = [];

beforeAll(async () => {
  gateway = await startTextGateway({ botDenied: PermissionFlagsBits.Connect });
  dir = mkdtempSync(join(tmpdir(), "vb-discord-commands-"));
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split("\n")) {
        if (!l) continue;
        lines.push(JSON.parse(l) as Line);
        if (process.env.E2E_LOG) process.stderr.write(`${l}\n`);
      }
      done();
    },
  });
  const config = loadConfig({
    env: {
      HOST: "127.0.0.1",
      PORT: "0",
      SIP_PORT: "off",
      SVC_LOCAL_DATA_DIR: dir,
      DISCORD_TOKEN: "MTIz.test.token",
      DISCORD_API_BASE: gateway.apiBase,
    },
  });
  bridge = await startBridge(config, pino({ level: process.env.E2E_LOG ?? "info" }, sink));
  expect(await bridge.discord!.ready).toBe(true);
}, 120_000);

afterAll(async () => {
  await bridge?.close(0);
  await gateway?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("slash commands", () => {
  it("registers /join and /leave for the server as it arrives", async () => {
    await until(() => gateway.commands.has(GUILD_ID), "the guild's commands");
    expect(
      gateway.commands
        .get(GUILD_ID)!
        .map((c) => c.name)
        .sort(),
    ).toEqual(["join", "leave"]);
  });

  it("/join from a member in no voice channel: asks them to join one, ephemerally", async () => {
    const [reply] = await gateway.command("join", false);
    expect(reply!.body.type).toBe(4);
    expect(reply!.body.data!.flags).toBe(EPHEMERAL);
    expect(reply!.body.data!.content).toMatch(/Join a voice channel first/);
  });

  it("/join into a channel the bot may not connect to: the member is told why, the operator reads one line", async () => {
    const errorsBefore = lines.filter((l) => l.level >= 50).length;
    const [deferred, edit] = await gateway.command("join", true);
    expect(deferred!.body.type).toBe(5);
    expect(deferred!.body.data!.flags).toBe(EPHEMERAL);
    expect(edit!.body.content).toMatch(/cannot join Lounge: I lack Connect/);
    const errors = lines.filter((l) => l.level >= 50).slice(errorsBefore);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.msg).toMatch(/"Lounge" .* in "Test Server": the bot lacks Connect there/);
    expect(bridge.discord!.conversations().size).toBe(0);
  });

  it("/leave when the agent is in no channel says so", async () => {
    const [reply] = await gateway.command("leave", false);
    expect(reply!.body.data!.content).toMatch(/not in a voice channel/);
    expect(reply!.body.data!.flags).toBe(EPHEMERAL);
  });

  it("the bridge keeps serving beside the bot", async () => {
    const res = await fetch(`${bridge.url}/healthz`);
    expect(res.status).toBe(200);
  });
});
