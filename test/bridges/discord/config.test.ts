// The discord section as the bot reads it, and the errors a bad value gives before anything starts.
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../../src/config/config.ts";

const load = (env: Record<string, string>) => loadConfig({ env });

describe("discord config", () => {
  it("reads the bot's keys from the environment", () => {
    const c = load({
      DISCORD_TOKEN: "abc.def.ghi",
      DISCORD_API_BASE: "http://127.0.0.1:4000/api",
      DISCORD_AUTO_JOIN: "123456789012345678, 223456789012345678",
      DISCORD_RESPOND_TO: "mention",
      DISCORD_AGENT_NAME: "Ada",
      DISCORD_SHARDS: "auto",
    }).discord;
    expect(c.token).toBe("abc.def.ghi");
    expect(c.apiBase).toBe("http://127.0.0.1:4000/api");
    expect(c.autoJoin).toEqual(["123456789012345678", "223456789012345678"]);
    expect(c.respondTo).toBe("mention");
    expect(c.agentName).toBe("Ada");
    expect(c.shards).toBe("auto");
  });

  it("leaves the bot off without a token, on Discord's API, unsharded", () => {
    const c = load({}).discord;
    expect(c.token).toBeUndefined();
    expect(c.apiBase).toBe("https://discord.com/api");
    expect(c.shards).toBeUndefined();
  });

  it("names the key of a channel id that is not a snowflake", () => {
    expect(() => load({ DISCORD_AUTO_JOIN: "lounge" })).toThrow(ConfigError);
    expect(() => load({ DISCORD_AUTO_JOIN: "lounge" })).toThrow(/DISCORD_AUTO_JOIN/);
  });

  it("names the key of a bad respondTo and of a bad shard count", () => {
    expect(() => load({ DISCORD_RESPOND_TO: "some" })).toThrow(/DISCORD_RESPOND_TO/);
    expect(() => load({ DISCORD_SHARDS: "0" })).toThrow(/DISCORD_SHARDS/);
  });
});
