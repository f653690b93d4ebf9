import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { bridgeCallEnds } from "../../bench/lib/calls-bridge-ends.ts";
import { createRtpCallTransportFactory } from "../../bridges/sip/rtp/call-transport.ts";
import { UdpRtpPortPool } from "../../bridges/sip/rtp/port-pool.ts";
import { buildRtp } from "../../bridges/sip/rtp/rtp-packet.ts";
import { systemClock } from "../../src/core/clock.ts";
import { bindUdp, freeEvenRange } from "../bridges/sip/rtp/ports.ts";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const json = (o: object) => JSON.stringify({ level: 30, time: 1, pid: 7, ...o });

describe("bridgeCallEnds", () => {
  it("reads the Twilio transport's call ended lines: frames and timestamp gaps per callSid", () => {
    const log = [
      json({ callSid: "CA1", inFrames: 1500, inGaps: 2, outFrames: 900, msg: "call ended" }),
      'not json but mentions "inFrames"',
      json({ callSid: "CA2", inFrames: 1499, msg: "call ended" }),
      json({ callId: "x@h", rx: { frames: 5 }, jitter: { lost: 0 }, msg: "RTP media ended" }),
    ].join("\n");
    const ends = bridgeCallEnds(log, "twilio");
    expect([...ends]).toEqual([
      ["CA1", { inFrames: 1500, inGaps: 2 }],
      ["CA2", { inFrames: 1499, inGaps: 0 }],
    ]);
  });

  it("reads the SIP transport's RTP media ended lines: frames and lost packets per Call-ID", () => {
    const log = [
      json({ callSid: "CA1", inFrames: 1500, inGaps: 2, msg: "call ended" }),
      json({ callId: "a@127.0.0.1", rx: { frames: 1490 }, jitter: { lost: 3 }, msg: "RTP media ended" }),
      json({ callId: "b@127.0.0.1", rx: { packets: 2 }, msg: "RTP media ended" }), // no frame count
      json({ callId: "c@127.0.0.1", note: 'quotes "RTP media ended"', msg: "something else" }),
    ].join("\n");
    expect([...bridgeCallEnds(log, "sip")]).toEqual([["a@127.0.0.1", { inFrames: 1490, inGaps: 3 }]]);
  });

  it("matches what the real RTP transport logs when a call ends", async () => {
    const lines: string[] = [];
    const log = pino({ level: "info" }, { write: (s: string) => void lines.push(s.trimEnd()) }).child({
      callId: "bench-call@127.0.0.1",
    });
    const base = await freeEvenRange(2);
    const pool = new UdpRtpPortPool({ host: "127.0.0.1", ports: `${base}-${base + 3}` });
    const caller = await bindUdp(0);
    cleanups.push(() => new Promise<void>((r) => caller.close(() => r())));
    const endpoint = await pool.open();
    let frames = 0;
    const transport = createRtpCallTransportFactory()({
      info: { callId: "bench-call@127.0.0.1", transport: "sip", params: {} },
      endpoint,
      media: {
        codec: { name: "pcmu", payloadType: 0, clockRate: 8000 },
        telephoneEventPt: 101,
        remote: { address: "127.0.0.1", port: caller.address().port },
        direction: "sendrecv",
      },
      control: { hangUp: async () => {}, transfer: async () => {} },
      clock: systemClock,
      log,
      mediaTimeoutMs: 60_000,
    });
    cleanups.push(() => transport.end("test over"));
    transport.attach({ audio: () => void frames++, dtmf: () => {}, played: () => {}, ended: () => {} });

    // Ten 20 ms packets with sequence number 5 missing: nine arrive, one is lost.
    const payload = new Uint8Array(160).fill(0xff);
    const send = (i: number) =>
      new Promise<void>((resolve, reject) =>
        caller.send(
          buildRtp({ payloadType: 0, sequence: 100 + i, timestamp: 8000 + 160 * i, ssrc: 42, payload }),
          endpoint.port,
          "127.0.0.1",
          (err) => (err ? reject(err) : resolve()),
        ),
      );
    for (let i = 0; i < 10; i++) {
      if (i !== 5) await send(i);
      await new Promise((r) => setTimeout(r, 20));
    }
    const deadline = Date.now() + 20_000;
    while (frames < 10 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    transport.end("test over");

    const ends = bridgeCallEnds(lines.join("\n"), "sip");
    expect(ends.get("bench-call@127.0.0.1")).toEqual({ inFrames: frames, inGaps: 1 });
    expect(frames).toBeGreaterThanOrEqual(9);
  });
});
