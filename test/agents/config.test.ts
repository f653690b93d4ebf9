import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AgentDirectory } from "../../src/agents/directory.ts";
import { ConfigError, configSchema, loadConfig } from "../../src/config/config.ts";
import { unknownKeys } from "../../src/config/unknown-keys.ts";
import { createLogger } from "../../src/core/log.ts";

function tmpFile(name: string, text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), "vb-agents-")), name);
  writeFileSync(file, text);
  return file;
}

function problems(yaml: string): string {
  const file = tmpFile("c.yaml", yaml);
  try {
    loadConfig({ file, env: {} });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("the configuration was accepted");
}

const log = createLogger({ level: "silent", format: "json" });

describe("agents in the config file", () => {
  it("keeps today's agent: block as the agent named default, beside named agents", async () => {
    const file = tmpFile(
      "c.yaml",
      [
        "agent:",
        "  greeting: Hello from the default line.",
        "agents:",
        "  sales:",
        "    greeting: Sales here, {{caller}}.",
        "    voice: en_male_adam",
        "    maxEndOfTurnMs: 900",
        "  support:",
        "    greeting: Support here.",
        "routes:",
        "  - { to: '+15550001', agent: sales }",
        "  - { from: '+44*', agent: support }",
      ].join("\n"),
    );
    const config = loadConfig({ file, env: {} });
    expect(config.agent.greeting).toBe("Hello from the default line.");
    expect(config.agents.sales?.maxEndOfTurnMs).toBe(900);
    // Each agent has every default of the model (nothing is inherited by accident).
    expect(config.agents.support?.maxEndOfTurnMs).toBe(1200);
    const dir = new AgentDirectory(config);
    expect(dir.names).toEqual(["default", "sales", "support"]);
    const pick = async (info: { from?: string; to?: string }) => {
      const p = await dir.pick({ callId: "c", transport: "sip", params: {}, ...info }, log);
      if (p.kind !== "agent") throw new Error("rejected");
      return p.agent;
    };
    const sales = await pick({ from: "+15559999", to: "+15550001" });
    expect(sales.name).toBe("sales");
    expect(sales.session.greeting).toBe("Sales here, +15559999.");
    expect(sales.models.voice).toBe("en_male_adam");
    expect(sales.session.agentName).toBe("sales");
    expect((await pick({ from: "+442071234567", to: "+15550002" })).name).toBe("support");
    const fallback = await pick({ from: "+15551111", to: "+15550002" });
    expect(fallback.name).toBe("default");
    expect(fallback.models.voice).toBe(config.service.voice);
  });

  it("names unknown keys with the nearest known one, wherever they are", () => {
    const text = problems(
      [
        "agnet:",
        "  greeting: hi",
        "service:",
        "  voise: en_male_adam",
        "agents:",
        "  sales:",
        "    greting: Sales here.",
        "    httpTools:",
        "      - { name: t, description: d, url: 'https://x.example/a', methd: GET }",
        "routes:",
        "  - { to: '1', agnt: sales, agent: sales }",
      ].join("\n"),
    );
    expect(text).toMatch(/agnet: unknown key "agnet" \(did you mean "agent"\?\)/);
    expect(text).toMatch(/service\.voise: unknown key "voise" \(did you mean "voice"\?\)/);
    expect(text).toMatch(/agents\.sales\.greting: unknown key "greting" \(did you mean "greeting"\?\)/);
    expect(text).toMatch(
      /agents\.sales\.httpTools\.0\.methd: unknown key "methd" \(did you mean "method"\?\)/,
    );
    expect(text).toMatch(/routes\.0\.agnt: unknown key "agnt" \(did you mean "agent"\?\)/);
  });

  it("passes an HTTP tool parameter's JSON Schema keys through to the model", () => {
    const file = tmpFile(
      "c.yaml",
      [
        "agent:",
        "  httpTools:",
        "    - name: paint",
        "      description: d",
        "      url: https://x.example/paint",
        "      parameters: { color: { type: string, enum: [red, blue] }, sizes: { type: array, items: { type: integer } } }",
      ].join("\n"),
    );
    expect(loadConfig({ file, env: {} }).agent.httpTools[0]?.parameters).toEqual({
      color: { type: "string", enum: ["red", "blue"] },
      sizes: { type: "array", items: { type: "integer" } },
    });
  });

  it("knows keys from the schema itself, so a key added to any section is known", () => {
    // Every key of every section of the schema's own defaults is known.
    const defaults = configSchema.parse({});
    expect(unknownKeys(configSchema, JSON.parse(JSON.stringify(defaults)))).toEqual([]);
    expect(unknownKeys(configSchema, { sip: { codecs: ["pcmu"], portt: 1 } })).toEqual([
      { path: ["sip", "portt"], suggestion: "port" },
    ]);
    // Far from every known key: no suggestion, still an error.
    expect(unknownKeys(configSchema, { zzzzzzzz: 1 })).toEqual([{ path: ["zzzzzzzz"] }]);
  });

  it("refuses a bad value with its agent's name, a route to no agent, and two defaults", () => {
    const text = problems(
      [
        "agent:",
        "  greeting: hi",
        "agents:",
        "  default: { greeting: hello }",
        "  sales: { maxReprompts: many, timeZone: Mars/Olympus }",
        "routes:",
        "  - { to: '1', agent: slaes }",
      ].join("\n"),
    );
    expect(text).toMatch(/agents\.sales\.maxReprompts: /);
    expect(text).toMatch(/agents\.sales\.timeZone: expected a time zone/);
    expect(text).toMatch(/routes\.0\.agent: no agent named "slaes"; agents: default, sales/);
    expect(text).toMatch(/agents\.default: the default agent is set twice/);
  });

  it("refuses templates naming what no call can have, at start", () => {
    const text = problems(
      [
        "agents:",
        "  sales:",
        "    greeting: Hello {{caler}}, about {{params.order}}.",
        "    httpTools:",
        "      - { name: t, description: d, url: 'https://x.example/{{param.id}}', body: { who: '{{whom}}' } }",
      ].join("\n"),
    );
    expect(text).toMatch(/agents\.sales\.greeting: unknown variable \{\{caler\}\}/);
    expect(text).toMatch(/agents\.sales\.greeting: unknown variable \{\{params\.order\}\}/);
    expect(text).toMatch(/agents\.sales\.httpTools\.0\.body\.who: unknown variable \{\{whom\}\}/);
    expect(text).not.toMatch(/param\.id/);
  });

  it("lets agents.default stand in for agent:, and AGENT_* variables then set it", async () => {
    const file = tmpFile("c.yaml", "agents:\n  default: { greeting: Hi from default, maxReprompts: 1 }\n");
    const dir = new AgentDirectory(loadConfig({ file, env: {} }));
    const p = await dir.pick({ callId: "c", transport: "twilio", params: {} }, log);
    expect(p.kind === "agent" && p.agent.session.greeting).toBe("Hi from default");
    const withEnv = loadConfig({
      file,
      env: { AGENT_GREETING: "Hi from env", AGENT_RECORDING_DIR: "/tmp/rec" },
    });
    expect(withEnv.agents.default).toMatchObject({ greeting: "Hi from env", maxReprompts: 1 });
    expect(withEnv.agent.recordingDir).toBe("/tmp/rec");
  });
});
