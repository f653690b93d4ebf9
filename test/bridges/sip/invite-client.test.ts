// INVITE client transactions (outbound calls) on virtual time: Timer A retransmissions until a
// provisional, the ACK of a non-2xx on the INVITE's branch (again for each retransmission), every
// 2xx passed up with its retransmissions marked, a local 408 when nothing answers, a local 503 at
// once when the connection fails.
import { describe, expect, it } from "vitest";
import type { SipFlow } from "../../../bridges/sip/flow.ts";
import { header, type SipResponse } from "../../../bridges/sip/message.ts";
import { InviteClients } from "../../../bridges/sip/outbound/invite-client.ts";
import { failureOf } from "../../../bridges/sip/outbound/uac.ts";
import { parseMessage } from "../../../bridges/sip/parse.ts";
import { DEFAULT_TIMERS } from "../../../bridges/sip/transaction.ts";
import { VirtualClock } from "../../../src/core/clock.ts";

const BRANCH = "z9hG4bKinv1";

function rig() {
  const clock = new VirtualClock();
  const sent: { at: number; text: string }[] = [];
  const broken: ((reason: string) => void)[] = [];
  const flow: SipFlow = {
    onError: (listener) => {
      broken.push(listener);
      return () => broken.splice(broken.indexOf(listener), 1);
    },
    transport: "UDP",
    remote: { address: "192.0.2.9", port: 5060 },
    local: { address: "192.0.2.1", port: 5070 },
    reliable: false,
    usable: true,
    send: (b) => sent.push({ at: clock.now(), text: b.toString() }),
  };
  const layer = new InviteClients(clock, DEFAULT_TIMERS);
  const got: { status: number; again: boolean }[] = [];
  layer.send(
    {
      kind: "request",
      method: "INVITE",
      uri: "sip:1001@proxy.example",
      headers: [
        { name: "via", value: `SIP/2.0/UDP 192.0.2.1:5070;branch=${BRANCH};rport` },
        { name: "route", value: "<sip:proxy.example;lr>" },
        { name: "from", value: "<sip:bridge@proxy.example>;tag=ours" },
        { name: "to", value: "<sip:1001@proxy.example>" },
        { name: "call-id", value: "out-1" },
        { name: "cseq", value: "1 INVITE" },
      ],
      body: Buffer.alloc(0),
    },
    flow,
    (res, again) => got.push({ status: res.status, again }),
  );
  const response = (status: number, toTag = "theirs"): SipResponse => ({
    kind: "response",
    status,
    reason: "x",
    headers: [
      { name: "via", value: `SIP/2.0/UDP 192.0.2.1:5070;branch=${BRANCH};rport` },
      { name: "from", value: "<sip:bridge@proxy.example>;tag=ours" },
      { name: "to", value: `<sip:1001@proxy.example>;tag=${toTag}` },
      { name: "call-id", value: "out-1" },
      { name: "cseq", value: "1 INVITE" },
    ],
    body: Buffer.alloc(0),
  });
  /** The flow's connection fails (a stream transport's refused or reset connection). */
  const breakFlow = (reason: string) => {
    for (const listener of broken) listener(reason);
  };
  return { clock, sent, layer, got, response, breakFlow };
}

describe("INVITE client transactions", () => {
  it("a failed connection is a 503 at once (RFC 3261 §8.1.3.1), not a 408 at Timer B", async () => {
    const { clock, layer, got, breakFlow } = rig();
    await clock.advance(1000);
    breakFlow("connect ECONNREFUSED 192.0.2.9:5060");
    expect(got).toEqual([{ status: 503, again: false }]);
    expect(layer.size).toBe(0);
    await clock.advance(64 * 500);
    expect(got).toHaveLength(1);
    expect(failureOf(503, "Service Unavailable (transport error: x)")).toMatchObject({ outcome: "failed" });
  });

  it("a connection failing after the final response changes nothing", async () => {
    const { layer, got, response, breakFlow } = rig();
    layer.receive(response(486));
    breakFlow("read ECONNRESET");
    expect(got.map((g) => g.status)).toEqual([486]);
  });

  it("retransmits on UDP at T1 doubling until a provisional response comes", async () => {
    const { clock, sent, layer, response } = rig();
    await clock.advance(3600);
    expect(sent.map((s) => s.at)).toEqual([0, 500, 1500, 3500]);
    layer.receive(response(180));
    await clock.advance(10_000);
    expect(sent).toHaveLength(4);
  });

  it("acknowledges a non-2xx on the INVITE's branch with its To tag, again for a retransmission", async () => {
    const { sent, layer, got, response } = rig();
    layer.receive(response(486));
    layer.receive(response(486));
    const acks = sent.slice(1).map((s) => parseMessage(Buffer.from(s.text)));
    expect(acks).toHaveLength(2);
    for (const a of acks) {
      if (!a.ok || a.msg.kind !== "request") throw new Error("not a request");
      expect(a.msg.method).toBe("ACK");
      expect(a.msg.uri).toBe("sip:1001@proxy.example");
      expect(header(a.msg, "via")).toContain(`branch=${BRANCH}`);
      expect(header(a.msg, "cseq")).toBe("1 ACK");
      expect(header(a.msg, "to")).toContain("tag=theirs");
      expect(header(a.msg, "route")).toBe("<sip:proxy.example;lr>");
    }
    expect(got).toEqual([{ status: 486, again: false }]);
  });

  it("passes every 2xx up (retransmissions marked) and does not acknowledge them itself", () => {
    const { sent, layer, got, response } = rig();
    layer.receive(response(200));
    layer.receive(response(200));
    expect(got).toEqual([
      { status: 200, again: false },
      { status: 200, again: true },
    ]);
    expect(sent).toHaveLength(1);
  });

  it("gives a local 408 when nothing answers within 64*T1", async () => {
    const { clock, got } = rig();
    await clock.advance(64 * DEFAULT_TIMERS.t1 + 1);
    expect(got).toEqual([{ status: 408, again: false }]);
  });
});

describe("an outbound call's final response as a dial outcome", () => {
  it.each([
    [486, undefined, "busy"],
    [600, undefined, "busy"],
    [408, undefined, "no-answer"],
    [480, undefined, "no-answer"],
    [487, "timeout", "no-answer"],
    [487, "canceled", "canceled"],
    [408, "canceled", "canceled"],
    [487, undefined, "failed"],
    [603, undefined, "failed"],
    [404, undefined, "failed"],
    [503, undefined, "failed"],
  ] as const)("%i (%s) is %s", (status, ended, outcome) => {
    const f = failureOf(status, "Reason", ended);
    expect(f.outcome).toBe(outcome);
    expect(f.reason).toMatch(new RegExp(`^${status} Reason`));
  });
});
