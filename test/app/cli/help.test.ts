// The CLI's help reads the environment variables from the config schema: none left out, none made up.
import { describe, expect, it } from "vitest";
import { environmentHelp, environmentSummary, envName, flagHelp } from "../../../app/cli-help.ts";
import { ENV_KEYS } from "../../../src/config/config.ts";

describe("the CLI's help on configuration", () => {
  it("lists every environment variable with the key it sets", () => {
    const text = environmentHelp(100);
    for (const [name, path] of Object.entries(ENV_KEYS)) expect(text).toContain(`${name} (${path.join(".")}`);
  });

  it("names every environment variable in the program's brief list, by section", () => {
    const text = environmentSummary(80);
    for (const name of Object.keys(ENV_KEYS)) expect(text).toMatch(new RegExp(`\\b${name}\\b`));
    expect(text).toMatch(/^ {2}server +HOST \(0\.0\.0\.0\), PORT \(8080\)/m);
    for (const line of text.split("\n")) expect(line.length).toBeLessThanOrEqual(80);
  });

  it("names a flag's variable and the key's default", () => {
    expect(flagHelp("port to listen on", "server.port")).toBe("port to listen on (env PORT, default 8080)");
    expect(flagHelp("shards", "discord.shards")).toBe("shards (env DISCORD_SHARDS)");
    expect(flagHelp("port", "local.port", { default: "8080" })).toBe(
      "port (env SVC_LOCAL_PORT, default 8080)",
    );
  });

  it("refuses a key no variable sets", () => {
    expect(envName("sip.tlsCert")).toBe("SIP_TLS_CERT");
    expect(() => envName("store.keepEnded")).toThrow("no environment variable sets store.keepEnded");
  });
});
