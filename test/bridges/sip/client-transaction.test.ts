// Non-INVITE client transactions (our BYE and REFER) on virtual time.
import { describe, expect, it } from "vitest";
import { ClientTransactions } from "../../../bridges/sip/client-transaction.ts";
import type { SipFlow } from "../../../bridges/sip/flow.ts";
import type { SipRequest, SipResponse } from "../../../bridges/sip/message.ts";
import { DEFAULT_TIMERS } from "../../../bridges/sip/transaction.ts";
import { VirtualClock } from "../../../src/core/clock.ts";

function rig(reliable = false) {
  const clock = new VirtualClock();
  const sentAt: number[] = [];
  const flow: SipFlow = {
    transport: reliable ? "TCP" : "UDP",
    remote: { address: "192.0.2.9", port: 5070 },
    local: { address: "192.0.2.1", port: 5060 },
    reliable,
    usable: true,
    send: () => sentAt.push(clock.now()),
  };
  const layer = new ClientTransactions(clock, DEFAULT_TIMERS);
  const bye: SipRequest = {
    kind: "request",
    method: "BYE",
    uri: "sip:caller@192.0.2.9",
    headers: [
      { name: "via", value: "SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bKbye1" },
      { name: "cseq", value: "2 BYE" },
    ],
    body: Buffer.alloc(0),
  };
  const response = (status: number, branch = "z9hG4bKbye1"): SipResponse => ({
    kind: "response",
    status,
    reason: "x",
    headers: [
      { name: "via", value: `SIP/2.0/UDP 192.0.2.1:5060;branch=${branch}` },
      { name: "cseq", value: "2 BYE" },
    ],
    body: Buffer.alloc(0),
  });
  return { clock, sentAt, flow, layer, bye, response };
}

const gaps = (t: number[]) => t.slice(1).map((v, i) => v - t[i]!);

describe("ClientTransactions", () => {
  it("retransmits T1 doubling to T2 (Timer E) and answers a local 408 after 64*T1 (Timer F)", async () => {
    const r = rig();
    const done = r.layer.send(r.bye, r.flow);
    r.clock.advance(32_000);
    expect(gaps(r.sentAt).slice(0, 5)).toEqual([500, 1000, 2000, 4000, 4000]);
    expect((await done).status).toBe(408);
    const count = r.sentAt.length;
    r.clock.advance(10_000);
    expect(r.sentAt).toHaveLength(count);
  });

  it("retransmits at T2 once a provisional came, and stops at the final response", async () => {
    const r = rig();
    const done = r.layer.send(r.bye, r.flow);
    r.clock.advance(500);
    expect(r.layer.receive(r.response(100))).toBe(true);
    r.clock.advance(12_500);
    expect(gaps(r.sentAt)).toEqual([500, 1000, 4000, 4000]);
    expect(r.layer.receive(r.response(200))).toBe(true);
    expect((await done).status).toBe(200);
    r.clock.advance(10_000);
    expect(r.sentAt).toHaveLength(5);
  });

  it("absorbs a retransmitted final response (Timer K), ignores responses of no transaction, sends once on TCP", async () => {
    const r = rig(true);
    const done = r.layer.send(r.bye, r.flow);
    r.clock.advance(5_000);
    expect(r.sentAt).toEqual([0]);
    expect(r.layer.receive(r.response(200, "z9hG4bKother"))).toBe(false);
    expect(r.layer.receive(r.response(200))).toBe(true);
    expect(r.layer.receive(r.response(200))).toBe(true);
    expect((await done).status).toBe(200);
    r.clock.advance(5_000);
    expect(r.layer.size).toBe(0);
  });
});
