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
  const listeners: ((reason: string) => void)[] = [];
  let failed: string | undefined;
  const flow: SipFlow = {
    transport: reliable ? "TCP" : "UDP",
    remote: { address: "192.0.2.9", port: 5070 },
    local: { address: "192.0.2.1", port: 5060 },
    reliable,
    usable: true,
    send: () => sentAt.push(clock.now()),
    onError: (listener) => {
      if (failed !== undefined) listener(failed);
      else listeners.push(listener);
      return () => listeners.includes(listener) && listeners.splice(listeners.indexOf(listener), 1);
    },
  };
  /** The connection fails (a stream transport's refused or reset connection). */
  const breakFlow = (reason: string) => {
    failed = reason;
    for (const listener of listeners.splice(0)) listener(reason);
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
  return { clock, sentAt, flow, layer, bye, response, breakFlow, listeners };
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

  it("a connection that fails is a local 503 at once (RFC 3261 §8.1.3.1), not a 408 at Timer F", async () => {
    const r = rig(true);
    let got: SipResponse | undefined;
    void r.layer.send(r.bye, r.flow).then((res) => (got = res));
    r.clock.advance(1000);
    r.breakFlow("connect ECONNREFUSED 192.0.2.9:5070");
    await Promise.resolve();
    expect(got).toMatchObject({
      status: 503,
      reason: "Service Unavailable (transport error: connect ECONNREFUSED 192.0.2.9:5070)",
    });
    r.clock.advance(64 * 500);
    expect(r.layer.size).toBe(0);
  });

  it("a request on a connection that has already failed ends at once", async () => {
    const r = rig(true);
    r.breakFlow("read ECONNRESET");
    const res = await r.layer.send(r.bye, r.flow);
    expect(res.status).toBe(503);
    expect(r.clock.now()).toBe(0);
  });

  it("a transaction that ended stops listening to its connection, which outlives it", async () => {
    const r = rig(true);
    const done = r.layer.send(r.bye, r.flow);
    expect(r.listeners).toHaveLength(1);
    r.layer.receive(r.response(200));
    expect((await done).status).toBe(200);
    expect(r.listeners).toHaveLength(0);
    r.breakFlow("read ECONNRESET");
    r.clock.advance(64 * 500);
    expect(r.layer.size).toBe(0);
  });
});
