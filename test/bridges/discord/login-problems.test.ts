import { describe, expect, it } from "vitest";
import { closeCodeProblem, loginProblem } from "../../../bridges/discord/login-problems.ts";

const INTENTS = ["Guilds", "GuildVoiceStates"];

describe("Discord login problems", () => {
  it("names DISCORD_TOKEN for a refused token, from REST (401) or the gateway (4004)", () => {
    const rest = loginProblem(
      Object.assign(new Error("An invalid token was provided."), { code: "TokenInvalid" }),
      "http://127.0.0.1:1/api",
      INTENTS,
    );
    expect(rest).toMatch(/refused the bot token/);
    expect(rest).toMatch(/DISCORD_TOKEN/);
    expect(loginProblem({ status: 401 }, "x", INTENTS)).toMatch(/DISCORD_TOKEN/);
    expect(closeCodeProblem(4004, INTENTS)).toMatch(/DISCORD_TOKEN/);
  });

  it("names the intents and where to enable them for 4014", () => {
    const line = closeCodeProblem(4014, INTENTS)!;
    expect(line).toMatch(/4014/);
    expect(line).toMatch(/Guilds, GuildVoiceStates/);
    expect(line).toMatch(/Privileged Gateway Intents/);
  });

  it("stays silent for close codes discord.js recovers from", () => {
    expect(closeCodeProblem(4000, INTENTS)).toBeUndefined();
    expect(closeCodeProblem(1006, INTENTS)).toBeUndefined();
  });

  it("points at DISCORD_API_BASE when the API cannot be reached", () => {
    const line = loginProblem(
      new Error("connect ECONNREFUSED 127.0.0.1:9"),
      "http://127.0.0.1:9/api",
      INTENTS,
    );
    expect(line).toMatch(/ECONNREFUSED/);
    expect(line).toMatch(/DISCORD_API_BASE \(http:\/\/127.0.0.1:9\/api\)/);
  });
});
