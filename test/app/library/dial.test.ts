// bridge.dial(): POST /calls' body from code, through the route's own checks and limits. A bad
// field and the pace limit reject with a DialError saying what the route would answer; a placed
// call whose trunk cannot be reached (nothing listens on its TCP port) ends as `failed`, and the
// agent's onCallEnd and the bridge's call-end hear it with its dial outcome.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type CallRecord,
  createBridge,
  DialError,
  defineAgent,
  type VoiceBridge,
} from "../../../app/index.ts";
import { until } from "../../helpers/agents-fixture.ts";

let dir: string;
let bridge: VoiceBridge;
const ended: CallRecord[] = [];

/** A TCP port nothing listens on (taken, then let go). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-dial-"));
  bridge = await createBridge({
    env: {},
    server: { host: "127.0.0.1", port: 0 },
    sip: { host: "127.0.0.1", port: 0, rtpPorts: "36900-36919" },
    outbound: {
      callsPerSecond: 0.1,
      sip: { proxy: `sip:127.0.0.1:${await closedPort()};transport=tcp`, from: "+15557770000" },
    },
    local: { dataDir: join(dir, "data") },
    agents: { reminder: defineAgent({ greeting: "Hi {{var.name}}.", onCallEnd: (r) => void ended.push(r) }) },
    log: { level: (process.env.E2E_LOG as "info" | undefined) ?? "silent" },
  });
}, 60_000);

afterAll(async () => {
  await bridge?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("bridge.dial()", () => {
  it("refuses a bad field as POST /calls does: a DialError naming it", async () => {
    const bad = bridge.dial({ to: "not a number", via: "sip" });
    await expect(bad).rejects.toBeInstanceOf(DialError);
    await expect(bad).rejects.toMatchObject({
      status: 400,
      field: "to",
      message: expect.stringMatching(/^to: /),
    });
    await expect(bridge.dial({ to: "15550100", via: "sip", agent: "nobody" })).rejects.toMatchObject({
      status: 400,
      field: "agent",
    });
    await expect(bridge.dial({ to: "15550100", via: "twilio" })).rejects.toMatchObject({ field: "via" });
  });

  it("places a call (its record at once), then refuses the next over the pace, with when to retry", async () => {
    const heard: CallRecord[] = [];
    bridge.on("call-end", (r) => heard.push(r));
    const { callId } = await bridge.dial({
      to: "15550100",
      via: "sip",
      agent: "reminder",
      variables: { name: "Ada" },
    });
    expect(bridge.record(callId)).toMatchObject({ direction: "outbound", agent: "reminder", to: "15550100" });
    const over = await bridge.dial({ to: "15550101", via: "sip" }).catch((e: unknown) => e);
    expect(over).toBeInstanceOf(DialError);
    expect(over).toMatchObject({ status: 429 });
    expect((over as DialError).retryAfterS).toBeGreaterThan(0);
    // Nothing answers at the trunk's address: the call fails, and the hooks say so.
    const record = await until(() => ended.find((r) => r.callId === callId), "onCallEnd", 10_000);
    expect(record).toMatchObject({ dialOutcome: "failed", direction: "outbound" });
    // At once, as a transport error (RFC 3261 §8.1.3.1), not after the ring timeout as a no-answer.
    expect(record.dialReason).toMatch(/^503 Service Unavailable \(transport error: .*ECONNREFUSED/);
    expect(heard.map((r) => r.callId)).toContain(callId);
    expect(bridge.hangUp(callId)).toBe(false);
  }, 60_000);
});
