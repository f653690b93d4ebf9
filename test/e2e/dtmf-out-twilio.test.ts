// The agent presses keys on a Twilio call (Media Streams has no message for it: the keys go as
// DTMF tones in the agent's audio), asked three ways: the model's send_dtmf tool, a TypeScript
// tool's ctx.sendDtmf, and an onTurn hook's call.sendDtmf. The simulated Twilio decodes what the
// caller heard with the project's DTMF detector.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { createBridge, defineAgent, tool, type VoiceBridge, z } from "../../app/index.ts";
import type { CallRecord } from "../../src/records/call-record.ts";
import { simulateCall } from "../../tools/twilio-sim/simulate.ts";

let dir: string;
let bridge: VoiceBridge;
const hookErrors: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-dtmf-"));
  const scripted = join(dir, "scripted.yaml");
  writeFileSync(
    scripted,
    stringify({
      name: "menu test line",
      greeting: "Hello.",
      fallback: "Okay.",
      rules: [
        {
          intent: "model_presses",
          when: ["keypad: 1\\b"],
          reply: "Pressing two.",
          tool: { name: "send_dtmf", arguments: { digits: "2w#" } },
          after_tool: "",
        },
        {
          intent: "tool_presses",
          when: ["keypad: 3\\b"],
          reply: "One moment.",
          tool: { name: "press_extension", arguments: {} },
          after_tool: "",
        },
      ],
    }),
  );
  const agent = defineAgent({
    greeting: "Hello.",
    tools: [
      tool({
        name: "press_extension",
        description: "Dials the extension",
        parameters: z.object({}),
        execute: (_args, ctx) => {
          ctx.sendDtmf("*9");
          return "dialled";
        },
      }),
    ],
    onTurn: (turn, call) => {
      if (turn.role === "user" && /keypad: 5\b/.test(turn.text))
        call.sendDtmf("0D").catch((err: Error) => hookErrors.push(err.message));
    },
  });
  bridge = await createBridge({
    env: {},
    server: { host: "127.0.0.1", port: 0 },
    sip: { port: "off" },
    local: { dataDir: join(dir, "data"), scriptedAgent: scripted, scriptedPaceMs: 0 },
    agent,
    log: { level: (process.env.E2E_LOG as "info" | undefined) ?? "silent" },
  });
}, 60_000);

afterAll(async () => {
  await bridge?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the agent's keys on a Twilio call (in-band tones)", () => {
  it("the model's send_dtmf, a tool's ctx.sendDtmf and a hook's call.sendDtmf are heard as tones", async () => {
    const r = await simulateCall({
      url: bridge.url,
      bridgeToken: bridge.token,
      dtmf: [
        { digit: "1", atMs: 2000 },
        { digit: "#", atMs: 2050 },
        { digit: "3", atMs: 6000 },
        { digit: "#", atMs: 6050 },
        { digit: "5", atMs: 9500 },
        { digit: "#", atMs: 9550 },
      ],
      hangUpAfterMs: 3000,
      maxSeconds: 16,
    });
    expect(hookErrors).toEqual([]);
    expect(r.agentKeys.map((k) => k.digit).join("")).toBe("2#*90D");
    // Each after what asked for it, and the model's after its words ("Pressing two.").
    const at = (d: string) => r.agentKeys.find((k) => k.digit === d)!.atMs;
    expect(at("2")).toBeGreaterThan(2050);
    expect(at("#") - at("2")).toBeGreaterThanOrEqual(500);
    expect(at("*")).toBeGreaterThan(6050);
    expect(at("0")).toBeGreaterThan(9550);
    const record = r.transcript as CallRecord;
    const notes = record.events
      .filter((e) => e.type === "note")
      .map((e) => (e.type === "note" ? e.text : ""));
    expect(notes).toEqual(
      expect.arrayContaining(["agent pressed 2w#", "agent pressed *9", "agent pressed 0D"]),
    );
  }, 30_000);
});
