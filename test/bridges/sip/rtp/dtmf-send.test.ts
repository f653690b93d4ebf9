import { afterEach, describe, expect, it } from "vitest";
import { dtmfRelayBody, parseInfoDtmf } from "../../../../bridges/sip/info-dtmf.ts";
import { buildTelephoneEvent, DtmfDetector, parseTelephoneEvent } from "../../../../bridges/sip/rtp/dtmf.ts";
import {
  END_REPEATS,
  EV_EVENT,
  EV_START,
  EVENT_VOLUME,
  eventPacketCount,
  telephoneEventPackets,
} from "../../../../bridges/sip/rtp/dtmf-send.ts";
import { systemClock } from "../../../../src/core/clock.ts";
import { until } from "../../../helpers/until.ts";
import { media, openCall, Peer, type Received } from "./rig.ts";

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

describe("telephoneEventPackets (RFC 4733)", () => {
  it("makes a packet per 20 ms with the duration so far, then the end three times, the first marked", () => {
    const { payloads, lengths, events } = telephoneEventPackets("#", 100, 160, 101);
    expect(lengths.length).toBe(eventPacketCount(100));
    expect(lengths.length).toBe(5 + END_REPEATS);
    expect([...lengths].every((l) => l === 4)).toBe(true);
    const parsed = [...lengths].map((_, i) => parseTelephoneEvent(payloads.subarray(i * 4, i * 4 + 4))!);
    expect(parsed.map((p) => p.event)).toEqual(Array(8).fill(11));
    expect(parsed.map((p) => p.duration)).toEqual([160, 320, 480, 640, 800, 800, 800, 800]);
    expect(parsed.map((p) => p.end)).toEqual([false, false, false, false, false, true, true, true]);
    expect(parsed.every((p) => p.volume === EVENT_VOLUME)).toBe(true);
    expect(events[0]).toBe(EV_EVENT | EV_START | 101);
    expect([...events.subarray(1)].every((e) => e === (EV_EVENT | 101))).toBe(true);
    // Opus calls count the event in the stream's own 48 kHz clock.
    const opus = telephoneEventPackets("1", 65, 960, 110);
    expect(parseTelephoneEvent(opus.payloads.subarray(opus.payloads.length - 4))).toEqual(
      parseTelephoneEvent(
        buildTelephoneEvent({ event: 1, end: true, volume: EVENT_VOLUME, duration: 4 * 960 }),
      ),
    );
    expect(() => telephoneEventPackets("x", 100, 160, 101)).toThrow(RangeError);
  });

  it("writes INFO's dtmf-relay body as the receive side reads it", () => {
    expect(dtmfRelayBody("#", 100)).toBe("Signal=#\r\nDuration=100\r\n");
    expect(parseInfoDtmf("application/dtmf-relay", dtmfRelayBody("7", 100))).toEqual({ digit: "7" });
    expect(() => dtmfRelayBody("77", 100)).toThrow(RangeError);
  });
});

describe("the agent's digits on a SIP call's RTP (real sockets, the send thread)", () => {
  async function call(extra: Parameters<typeof media>[2] = {}) {
    const caller = await Peer.open();
    cleanup.push(() => caller.close());
    const r = await openCall(media(caller.port, undefined, extra), 30_000, { clock: systemClock });
    cleanup.push(() => r.close());
    return { caller, r };
  }

  it("sends each digit as telephone-events in the voice's place, on its SSRC and sequence", async () => {
    const { caller, r } = await call();
    const out = r.transport.dtmfOut;
    expect(out.kind).toBe("signal");
    r.transport.play(new Int16Array(800).fill(1000));
    await out.send("5", 100);
    await out.send("#", 100);
    r.transport.play(new Int16Array(160).fill(1000));
    await until(() => r.transport.playedMs() >= r.transport.queuedMs(), "the voice after the digits sent");
    await until(
      () => caller.received.filter((p) => p.payloadType === 0).length > 20,
      "voice after the digits",
    );
    const from = caller.received.findIndex((p) => p.payloadType === 101);
    const run = caller.received.slice(from - 1);
    // One stream: one SSRC, sequence numbers one after the other, events or not.
    expect(new Set(run.map((p) => p.ssrc)).size).toBe(1);
    for (let i = 1; i < run.length; i++) expect(run[i]!.sequence).toBe((run[i - 1]!.sequence + 1) & 0xffff);
    const events = caller.received.filter((p) => p.payloadType === 101);
    expect(events.length).toBe(2 * eventPacketCount(100));
    const first = events.slice(0, 8);
    const second = events.slice(8);
    for (const ev of [first, second]) {
      expect(ev.map((p) => p.marker)).toEqual([true, false, false, false, false, false, false, false]);
      expect(new Set(ev.map((p) => p.timestamp)).size).toBe(1);
    }
    // Each event's timestamp is the stream's at its first packet: the second is 8 packets + the gap on.
    expect(((second[0]!.timestamp - first[0]!.timestamp) >>> 0) % 160).toBe(0);
    expect((second[0]!.timestamp - first[0]!.timestamp) >>> 0).toBeGreaterThanOrEqual(8 * 160);
    const detector = new DtmfDetector();
    const digits = events
      .map((p: Received) => detector.packet(p.ssrc, p.timestamp, p.marker, p.payload))
      .filter(Boolean);
    expect(digits).toEqual(["5", "#"]);
    // The voice goes on after the events on the same timeline, 160 ticks a packet.
    const last = events.at(-1)!;
    const next = caller.received[caller.received.indexOf(last) + 1]!;
    expect(next.payloadType).toBe(0);
    expect((next.timestamp - first[0]!.timestamp) >>> 0).toBeGreaterThan(0);
  });

  it("sends the digit by INFO when the call negotiated no telephone-event", async () => {
    const { r } = await call({ telephoneEventPt: undefined });
    const infos: string[] = [];
    r.control.dtmfInfo = async (digit, ms) => {
      infos.push(`${digit}/${ms}`);
    };
    await r.transport.dtmfOut.send("9", 100);
    expect(infos).toEqual(["9/100"]);
    r.control.dtmfInfo = undefined;
    await expect(r.transport.dtmfOut.send("9", 100)).rejects.toThrow(/no telephone-event/);
  });
});
