// Handoffs in the configuration (#56): the agents an agent may hand calls to must exist (the error
// names the key and the unknown agent); the directory resolves the next agent for the same call,
// its templates filled with the call's variables, with its line and the history it gives.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AgentDirectory } from "../../src/agents/directory.ts";
import { ConfigError, loadConfig } from "../../src/config/config.ts";
import { createLogger } from "../../src/core/log.ts";

const log = createLogger({ level: "silent", format: "json" });

function configFile(yaml: string): string {
  const file = join(mkdtempSync(join(tmpdir(), "vb-handoffs-")), "c.yaml");
  writeFileSync(file, yaml);
  return file;
}

describe("handoffs in the configuration", () => {
  it("refuses a handoff to an agent that does not exist, or to itself, naming both", () => {
    const file = configFile(
      [
        "agent: { handoffs: [sales, billing] }",
        "agents:",
        "  sales: { handoffs: [sales], handoffHistory: some }",
      ].join("\n"),
    );
    let message = "";
    try {
      loadConfig({ file, env: {} });
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      message = (err as Error).message;
    }
    expect(message).toMatch(/agent\.handoffs\.1: no agent named "billing"; agents: default, sales/);
    expect(message).toMatch(/agents\.sales\.handoffs\.0: agent "sales" cannot hand a call to itself/);
    expect(message).toMatch(/agents\.sales\.handoffHistory: expected whole, summary or none/);
    expect(message).not.toMatch(/agent\.handoffs\.0/);
  });

  it("resolves the next agent for the same call, with the call's variables", async () => {
    const file = configFile(
      [
        "agent: { greeting: Support., handoffs: [sales], handoffHistory: summary }",
        "agents:",
        "  sales:",
        "    systemPrompt: Sell to {{caller}}.",
        "    handoffLine: Sales here for {{var.tier}} customers.",
        "    voice: en_male_adam",
      ].join("\n"),
    );
    const dir = new AgentDirectory(loadConfig({ file, env: {} }));
    const info = { callId: "c1", transport: "twilio" as const, from: "+15550009", params: {} };
    const picked = await dir.pick(info, log);
    if (picked.kind !== "agent") throw new Error("no agent");
    expect(picked.agent.session.handoffs).toEqual({ agents: ["sales"], history: "summary" });
    const outbound = dir.forOutbound("default", info, { tier: "gold" }, log)!;
    const sales = outbound.handoffTo?.("sales");
    expect(sales).toMatchObject({ name: "sales", chosenBy: "handoff", variables: { tier: "gold" } });
    expect(sales?.session).toMatchObject({
      agentName: "sales",
      systemPrompt: "Sell to +15550009.",
      handoffLine: "Sales here for gold customers.",
    });
    expect(sales?.session.handoffs).toBeUndefined();
    expect(sales?.models.voice).toBe("en_male_adam");
    expect(outbound.handoffTo?.("nobody")).toBeUndefined();
  });
});
