// Environment variables are declared at their keys in the schema; these pin how they are collected.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ENV_KEYS } from "../../src/config/config.ts";
import { envTable, envVariables } from "../../src/config/env.ts";

describe("environment variables from the schema", () => {
  const agent = z.object({ name: z.string().optional().meta({ env: "AGENT_NAME", description: "A name." }) });
  const schema = z.object({
    net: z
      .object({
        port: z.coerce.number().default(80).meta({ env: "NET_PORT" }),
        tls: z.object({ cert: z.string().optional().meta({ env: "NET_TLS_CERT" }) }).prefault({}),
        peers: z.array(z.object({ host: z.string().meta({ env: "PEER_HOST" }) })).default([]),
      })
      .prefault({}),
    agent: agent.prefault({}),
    agents: z.record(z.string(), agent).default({}),
  });

  it("are read at every key reached through objects, nested ones included", () => {
    expect(envTable(envVariables(schema))).toEqual({
      NET_PORT: ["net", "port"],
      NET_TLS_CERT: ["net", "tls", "cert"],
      AGENT_NAME: ["agent", "name"],
    });
  });

  it("set nothing inside a list's items or a mapping's entries", () => {
    const paths = envVariables(schema).map((v) => v.path.join("."));
    expect(paths).not.toContain("net.peers.host");
    expect(paths.some((p) => p.startsWith("agents."))).toBe(false);
  });

  it("may not name one variable twice", () => {
    const twice = z.object({
      a: z.string().optional().meta({ env: "SAME" }),
      b: z.string().optional().meta({ env: "SAME" }),
    });
    expect(() => envTable(envVariables(twice))).toThrow("SAME is declared twice: a and b");
  });

  it("give the bridge's variables their keys", () => {
    expect(ENV_KEYS.LOG_LEVEL).toEqual(["log", "level"]);
    expect(ENV_KEYS.SIP_OUTBOUND_PROXY).toEqual(["outbound", "sip", "proxy"]);
    expect(ENV_KEYS.AGENT_RECORDING_DIR).toEqual(["agent", "recordingDir"]);
  });
});
