// The core of `npm run bench -- transfer` at two transfers: the bench's callers and persons (its
// own SIP user agents) against a real bridge with its embedded local service, the persons reached
// through the bridge's outbound proxy. Each figure comes from what a party heard, so the test
// checks that every one was measured, and that the tones the measures rest on are told apart.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bridge, startBridge } from "../../app/bridge/start.ts";
import { PersonsTrunk, transferCall, transferFigures } from "../../bench/lib/transfer-calls.ts";
import { classify, TONE_HZ, tone } from "../../bench/lib/transfer-party.ts";
import { SipEndpoint } from "../../bench/lib/transfer-sip.ts";
import { encodeWav } from "../../codecs/wav.ts";
import { loadConfig } from "../../src/config/config.ts";
import { speak } from "../helpers/speech.ts";
import { loopbackSipEnv } from "../outbound/bridge-env.ts";

let dir: string;
let bridge: Bridge;
let persons: PersonsTrunk;
let callers: SipEndpoint;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-bench-transfer-"));
  [persons, callers] = await Promise.all([PersonsTrunk.open(), SipEndpoint.open()]);
  const hold = join(dir, "hold.wav");
  writeFileSync(hold, encodeWav(tone(TONE_HZ.hold, 1000, 3000), 8000));
  const env = {
    ...loopbackSipEnv({ token: "bench-transfer-token-0123456789", rtpPorts: "38500-38599", dir }),
    AGENT_GREETING: "Hello.",
    SIP_OUTBOUND_PROXY: `sip:127.0.0.1:${persons.port}`,
  };
  const overrides = {
    agent: {
      transferTarget: "{{called}}",
      transferMode: "warm",
      transferHoldAudio: hold,
      transferBrief: "Order.",
      transferAnswerSeconds: 10,
    },
  };
  bridge = await startBridge(loadConfig({ env, overrides }), pino({ level: "silent" }));
}, 60_000);

afterAll(async () => {
  await bridge?.close(0);
  await Promise.all([persons?.close(), callers?.close()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("bench transfer", () => {
  it("tells the hold audio, each party's line and a voice apart, frame by frame", () => {
    const frame = (pcm: Int16Array) => pcm.subarray(0, 160);
    expect(classify(frame(tone(TONE_HZ.hold, 20, 3000)))).toBe("hold");
    expect(classify(frame(tone(TONE_HZ.caller, 20)))).toBe("caller");
    expect(classify(frame(tone(TONE_HZ.person, 20)))).toBe("person");
    expect(classify(new Int16Array(160))).toBe("quiet");
    const word = speak("Hello there", { rate: 8000 });
    const loud = Array.from({ length: Math.floor(word.length / 160) }, (_, i) =>
      word.subarray(i * 160, (i + 1) * 160),
    )
      .map(classify)
      .filter((k) => k !== "quiet");
    expect(loud.length).toBeGreaterThan(5);
    expect(loud.every((k) => k === "voice")).toBe(true);
  });

  it("holds two callers, briefs two persons, and measures each join from what both ends heard", async () => {
    const hello = speak("Hello?", { rate: 8000 });
    const target = { address: "127.0.0.1", port: bridge.sip!.udpPort };
    const calls = await Promise.all(
      ["7000", "7001"].map((number) => transferCall({ bridge: target, callers, persons, number, hello })),
    );
    try {
      const figures = transferFigures(calls.map((c) => c.result));
      expect(figures.failures).toEqual([]);
      expect(figures.joined).toBe(2);
      for (const r of calls.map((c) => c.result)) {
        expect(r.heldMs).toBeGreaterThan(0);
        expect(r.holdGapMs).toBeGreaterThanOrEqual(0);
        expect(r.holdGapMs).toBeLessThan(r.heldMs!);
        expect(r.callerHearsPersonMs).toBeGreaterThan(0);
        expect(r.personHearsCallerMs).toBeGreaterThan(0);
      }
      expect(figures.joinMs).toHaveLength(2);
    } finally {
      await Promise.all(calls.map((c) => c.hangUp()));
    }
  }, 60_000);
});
