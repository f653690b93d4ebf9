// Which calls get a warm transfer's dialler (app/bridge/warm-transfer.ts), and the clear failure of
// one whose carrier has no dialling configured. Placing the person's call is tested end to end
// (test/e2e/sip-warm-transfer.test.ts, test/e2e/twilio-warm-transfer.test.ts).
import { describe, expect, it } from "vitest";
import { warmTransferDialer } from "../../../app/bridge/warm-transfer.ts";
import { loadConfig } from "../../../src/config/config.ts";
import { silentLogger } from "../../../src/core/log.ts";
import type { CallInfo } from "../../../src/session/transport.ts";
import { PersonNotReached } from "../../../src/session/warm-transfer.ts";

const dialerFor = warmTransferDialer(loadConfig({ env: {} }), () => ({ sip: undefined, twilio: undefined }));
const info = (transport: CallInfo["transport"]): CallInfo => ({ callId: "c1", transport, params: {} });
const opts = { ringTimeoutS: 5, signal: new AbortController().signal, log: silentLogger };

describe("the warm transfer's dialler", () => {
  it("is given to SIP and Twilio calls only (the others transfer blind)", () => {
    expect(dialerFor(info("sip"))).toBeTypeOf("function");
    expect(dialerFor(info("twilio"))).toBeTypeOf("function");
    for (const t of ["audiosocket", "browser", "discord"] as const)
      expect(dialerFor(info(t))).toBeUndefined();
  });

  it("fails a Twilio call's transfer, saying what is missing, when Twilio dialling is not configured", async () => {
    const failure = await dialerFor(info("twilio"))!("+15550001", opts).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(PersonNotReached);
    expect((failure as PersonNotReached).outcome).toBe("failed");
    expect((failure as PersonNotReached).message).toMatch(
      /twilio\.accountSid.*twilio\.authToken.*server\.publicUrl/,
    );
  });
});
