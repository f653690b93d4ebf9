// The agent presses keys on an Asterisk AudioSocket call: the protocol's DTMF frame only comes from
// Asterisk, so the keys go as DTMF tones in the agent's slin audio, which the client (written to
// the published framing) decodes with the project's DTMF detector.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type Bridge, startBridge } from "../../app/bridge/start.ts";
import { detectDtmf } from "../../codecs/dtmf-detector.ts";
import { loadConfig } from "../../src/config/config.ts";
import { AsteriskClient, frame, uuidFrame } from "../bridges/audiosocket/client.ts";
import { until } from "../helpers/until.ts";

let dir: string;
let bridge: Bridge;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-e2e-as-dtmf-"));
  const scripted = join(dir, "scripted.yaml");
  writeFileSync(
    scripted,
    stringify({
      name: "menu test line",
      greeting: "Hello.",
      fallback: "Okay.",
      rules: [
        {
          intent: "press",
          when: ["keypad: 1\\b"],
          reply: "Pressing.",
          tool: { name: "send_dtmf", arguments: { digits: "73*" } },
          after_tool: "",
        },
      ],
    }),
  );
  const config = loadConfig({
    env: {
      HOST: "127.0.0.1",
      PORT: "0",
      SIP_PORT: "off",
      AUDIOSOCKET_HOST: "127.0.0.1",
      AUDIOSOCKET_PORT: "0",
      SVC_LOCAL_DATA_DIR: join(dir, "data"),
      SVC_SCRIPTED_AGENT: scripted,
      SVC_SCRIPTED_PACE_MS: "0",
      AGENT_GREETING: "Hello.",
    },
  });
  bridge = await startBridge(config, pino({ level: process.env.E2E_LOG ?? "silent" }));
});

afterAll(async () => {
  await bridge?.close(0);
  rmSync(dir, { recursive: true, force: true });
});

describe("the agent's keys on an AudioSocket call", () => {
  it("are heard as DTMF tones in its audio, after its words", async () => {
    const uuid = "5a1c2a3b-5d6e-4f70-8a9b-0c1d2e3f4a5c";
    const client = await AsteriskClient.connect(bridge.audioSocket!.port);
    client.send(uuidFrame(uuid));
    const silence = (ms: number) => new Int16Array(8 * ms);
    await client.stream(silence(1500), 8000);
    client.send(frame(0x03, Buffer.from("1")));
    client.send(frame(0x03, Buffer.from("#")));
    const pressed = () =>
      bridge.transcripts.get(uuid)?.events.some((e) => e.type === "note" && e.text === "agent pressed 73*");
    const streaming = client.stream(silence(5000), 8000);
    await until(pressed, "the agent's keys sent", 15_000);
    await streaming;
    expect(detectDtmf(client.audio().pcm, 8000)).toBe("73*");
    client.send(frame(0x00));
    await until(() => bridge.transcripts.get(uuid)?.endReason !== undefined, "the call to end");
    client.close();
  }, 30_000);
});
