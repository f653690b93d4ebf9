// Several agents over SIP, from a real phone (baresip): the Request-URI/To user picks the agent
// (its greeting, with the caller and a webhook variable); the call-start webhook is asked while
// the phone rings and its rejection is a 603 Decline; support hands a call to accounts on keypad 2
// (handoff-fixture.ts), the whole conversation carried.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bridge, startBridge } from "../../app/bridge/start.ts";
import { encodeWav, parseWav } from "../../codecs/wav.ts";
import type { CallRecord } from "../../src/records/call-record.ts";
import { type AgentsFixture, agentsFixture, REJECTED_CALLER, until } from "../helpers/agents-fixture.ts";
import { Baresip } from "../helpers/baresip.ts";
import { addHandoff, expectHandedOff, expectVoicesChanged } from "../helpers/handoff-fixture.ts";

let f: AgentsFixture;
let bridge: Bridge;
let silence: string;

beforeAll(async () => {
  f = await agentsFixture({ sip: { host: "127.0.0.1", port: 0, rtpPorts: "34000-34199" } });
  addHandoff(f, "whole");
  bridge = await startBridge(f.load(), pino({ level: process.env.E2E_LOG ?? "silent" }));
  silence = join(f.dir, "silence.wav");
  writeFileSync(silence, encodeWav(new Int16Array(8000 * 20), 8000));
}, 60_000);
afterAll(async () => {
  await bridge?.close(0);
  await f?.server.close();
  if (f) rmSync(f.dir, { recursive: true, force: true });
});

/** The record of the call whose greeting has been heard, among calls not in `before`. */
function newCall(before: Set<string>): CallRecord | undefined {
  for (const callId of bridge.transcripts.liveCalls) {
    if (before.has(callId)) continue;
    const r = bridge.transcripts.get(callId);
    if (r?.turns.some((t) => t.role === "assistant")) return r;
  }
  return undefined;
}
const known = () => new Set(bridge.transcripts.liveCalls);

describe("two agents over SIP", () => {
  it.each([
    ["sales", "Sales line. Hello caller, account ."],
    ["support", "Support line for gold customers."],
  ])(
    "sip:%s@ reaches its agent",
    async (user, greeting) => {
      const before = known();
      const phone = await Baresip.start({ codec: "pcmu", wav: silence });
      try {
        phone.dial(`sip:${user}@127.0.0.1:${bridge.sip!.udpPort}`);
        await phone.waitFor("CALL_ESTABLISHED");
        const record = await until(() => newCall(before), "the greeting");
        expect(record).toMatchObject({ transport: "sip", agent: user, to: user, from: "caller" });
        expect(record.turns[0]).toMatchObject({ role: "assistant", generated: greeting });
        phone.hangUp();
        await phone.waitFor("CALL_CLOSED");
      } finally {
        await phone.stop();
      }
    },
    60_000,
  );

  it("declines (603) a caller the webhook rejects, after ringing", async () => {
    const before = known();
    const phone = await Baresip.start({ codec: "pcmu", wav: silence, user: REJECTED_CALLER });
    try {
      phone.dial(`sip:support@127.0.0.1:${bridge.sip!.udpPort}`);
      const ringing = await phone.waitFor("CALL_RINGING");
      expect(ringing).toBeDefined();
      const closed = await phone.waitFor("CALL_CLOSED");
      expect(String(closed.param)).toMatch(/603/);
      expect(phone.events.some((e) => e.type === "CALL_ESTABLISHED")).toBe(false);
      const hook = f.server.to("/hook").at(-1)!;
      expect(JSON.parse(hook.body.toString())).toMatchObject({
        transport: "sip",
        from: REJECTED_CALLER,
        to: "support",
      });
      expect([...known()].filter((id) => !before.has(id))).toEqual([]);
    } finally {
      await phone.stop();
    }
  }, 60_000);

  it("support hands the call to accounts (keypad 2): the accounts agent's voice, the whole history carried", async () => {
    const before = known();
    const phone = await Baresip.start({ codec: "pcmu", wav: silence });
    try {
      phone.dial(`sip:support@127.0.0.1:${bridge.sip!.udpPort}`);
      await phone.waitFor("CALL_ESTABLISHED");
      const { callId } = await until(() => newCall(before), "the greeting");
      phone.sendDigits("2#");
      const record = () => bridge.transcripts.get(callId);
      await until(
        () => record()?.turns.some((t) => t.role === "assistant" && t.agent === "accounts"),
        "accounts",
      );
      phone.hangUp();
      await phone.waitFor("CALL_CLOSED");
      await until(() => record()?.endReason, "the call to end");
      expectHandedOff(record()!, "Support line for gold customers.", "whole");
      await phone.stop();
      // What the phone heard, decoded by baresip from the wire.
      const heard = parseWav(readFileSync(phone.dumps().heard!));
      expectVoicesChanged(heard.samples, heard.sampleRate);
    } finally {
      await phone.stop();
    }
  }, 60_000);
});
