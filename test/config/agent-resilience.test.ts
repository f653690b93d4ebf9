// An agent's deadlines, hedging, fallback and circuit (#54): their defaults, what a call's agent
// carries of them, and the errors that name a bad key.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AgentDirectory } from "../../src/agents/directory.ts";
import { ConfigError, loadConfig } from "../../src/config/config.ts";
import { silentLogger } from "../../src/core/log.ts";
import { DEFAULT_SERVICE_DEADLINES, EMBEDDED_SERVICE_DEADLINES } from "../../src/session/config.ts";

function configFile(yaml: string): string {
  const file = join(mkdtempSync(join(tmpdir(), "vb-resilience-")), "c.yaml");
  writeFileSync(file, yaml);
  return file;
}

async function agentOf(yaml: string) {
  const dir = new AgentDirectory(loadConfig({ file: configFile(yaml), env: {} }));
  const pick = await dir.pick({ callId: "c", transport: "twilio", params: {} }, silentLogger);
  if (pick.kind !== "agent") throw new Error("no agent");
  return pick.agent;
}

function problems(yaml: string): string {
  try {
    loadConfig({ file: configFile(yaml), env: {} });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("the configuration was accepted");
}

describe("an agent's service resilience", () => {
  it("defaults to the session's deadlines, hedging on, no fallback, 5 failures in 30 s for 20 s", async () => {
    const hosted = "service: { baseUrl: 'https://api.example/v1', apiKey: k1 }\n";
    const agent = await agentOf(`${hosted}agent: { greeting: Hi }\n`);
    expect(agent.session.deadlines).toEqual(DEFAULT_SERVICE_DEADLINES);
    expect(agent.resilience).toEqual({
      hedge: true,
      fallback: undefined,
      circuit: { failures: 5, windowMs: 30_000, openMs: 20_000 },
    });
  });

  it("waits longer for the embedded service's recognition and speech, unless it plays a hosted one", async () => {
    const embedded = await agentOf("agent: { greeting: Hi }\n");
    expect(embedded.session.deadlines).toEqual(EMBEDDED_SERVICE_DEADLINES);
    expect(EMBEDDED_SERVICE_DEADLINES.asrMs).toBeGreaterThan(DEFAULT_SERVICE_DEADLINES.asrMs);
    const playing = await agentOf("local: { latency: hosted }\nagent: { greeting: Hi }\n");
    expect(playing.session.deadlines).toEqual(DEFAULT_SERVICE_DEADLINES);
    const failing = await agentOf("local: { faults: 'asr503=0.1' }\nagent: { greeting: Hi }\n");
    expect(failing.session.deadlines).toEqual(DEFAULT_SERVICE_DEADLINES);
  });

  it("takes deadlines, a fallback on another service and a circuit as written", async () => {
    const agent = await agentOf(
      [
        "agent:",
        "  deadlines: { chatFirstMs: 800, asrMs: 1500 }",
        "  hedge: false",
        "  fallback: { chatModel: svc-3.5-flash-lite, voice: en_male_adam, baseUrl: 'https://spare.example/v1', apiKey: k2 }",
        "  circuit: { failures: 3, windowSeconds: 10, openSeconds: 5 }",
      ].join("\n"),
    );
    expect(agent.session.deadlines).toEqual({ ...EMBEDDED_SERVICE_DEADLINES, chatFirstMs: 800, asrMs: 1500 });
    expect(agent.resilience).toEqual({
      hedge: false,
      fallback: {
        chatModel: "svc-3.5-flash-lite",
        voice: "en_male_adam",
        endpoint: { baseUrl: "https://spare.example/v1", apiKey: "k2" },
      },
      circuit: { failures: 3, windowMs: 10_000, openMs: 5_000 },
    });
  });

  it("names the key of a bad value", () => {
    expect(problems("agent:\n  deadlines: { chatFirstMs: 5 }\n")).toMatch(
      /agent\.deadlines\.chatFirstMs: expected a whole number from 100 to 30000/,
    );
    expect(problems("agent:\n  deadlines: { chatFirstMs: 2000, chatTotalMs: 1000 }\n")).toMatch(
      /agent\.deadlines\.chatTotalMs: must be at least chatFirstMs \(2000\)/,
    );
    expect(problems("agent:\n  circuit: { failures: 0 }\n")).toMatch(
      /agent\.circuit\.failures: expected a whole number from 1/,
    );
    expect(problems("agent:\n  fallback: {}\n")).toMatch(
      /agent\.fallback: expected at least one of chatModel/,
    );
    expect(problems("agent:\n  fallback: { chatMdl: x }\n")).toMatch(/agent\.fallback\.chatMdl/);
  });

  it("never sends the service's key to a fallback address: a fallback baseUrl needs its own key", () => {
    expect(problems("agent:\n  fallback: { baseUrl: 'https://spare.example' }\n")).toMatch(
      /agent\.fallback\.apiKey: required with fallback\.baseUrl/,
    );
  });
});
