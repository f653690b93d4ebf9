import { describe, expect, it } from "vitest";
import { buildTelephoneEvent, DtmfDetector, dtmfEvent } from "../../../../bridges/sip/rtp/dtmf.ts";

/** The packets an RFC 4733 sender emits for one press: start (marker), updates, end ×3. */
function press(digit: string, timestamp: number, updates = 3) {
  const event = dtmfEvent(digit);
  const packets: Array<{ ts: number; marker: boolean; payload: Uint8Array }> = [];
  for (let i = 0; i <= updates; i++)
    packets.push({
      ts: timestamp,
      marker: i === 0,
      payload: buildTelephoneEvent({ event, end: false, volume: 10, duration: 160 * (i + 1) }),
    });
  for (let i = 0; i < 3; i++)
    packets.push({
      ts: timestamp,
      marker: false,
      payload: buildTelephoneEvent({ event, end: true, volume: 10, duration: 800 }),
    });
  return packets;
}

describe("DtmfDetector", () => {
  it("reports each press once, even the same digit twice in a row and the triple end packet", () => {
    const d = new DtmfDetector();
    const digits: string[] = [];
    let ts = 1000;
    for (const digit of ["1", "1", "#", "*", "0", "D"]) {
      for (const p of press(digit, ts)) {
        const got = d.packet(0xabc, p.ts, p.marker, p.payload);
        if (got) digits.push(got);
      }
      ts += 2000;
    }
    expect(digits).toEqual(["1", "1", "#", "*", "0", "D"]);
  });

  it("still reports a press whose start packets were lost, and only once", () => {
    const d = new DtmfDetector();
    const packets = press("5", 500).slice(-3);
    const digits = packets.map((p) => d.packet(1, p.ts, p.marker, p.payload)).filter(Boolean);
    expect(digits).toEqual(["5"]);
  });

  it("treats a long press's next segment (new timestamp, no marker, not ended) as the same press", () => {
    const d = new DtmfDetector();
    const e = dtmfEvent("9");
    const got = [
      d.packet(1, 100, true, buildTelephoneEvent({ event: e, end: false, volume: 10, duration: 0xffff })),
      d.packet(
        1,
        100 + 0xffff,
        false,
        buildTelephoneEvent({ event: e, end: false, volume: 10, duration: 400 }),
      ),
      d.packet(
        1,
        100 + 0xffff,
        false,
        buildTelephoneEvent({ event: e, end: true, volume: 10, duration: 800 }),
      ),
    ].filter(Boolean);
    expect(got).toEqual(["9"]);
  });

  it("ignores short payloads and non-DTMF events", () => {
    const d = new DtmfDetector();
    expect(d.packet(1, 1, true, new Uint8Array(3))).toBeUndefined();
    expect(
      d.packet(1, 2, true, buildTelephoneEvent({ event: 66, end: false, volume: 0, duration: 0 })),
    ).toBeUndefined();
    expect(() => dtmfEvent("x")).toThrow(/not a DTMF digit/);
  });
});
