import { describe, expect, it } from "vitest";
import { type ReceiverOptions, RtpReceiver } from "../../../../bridges/sip/rtp/receiver.ts";
import { buildRtp } from "../../../../bridges/sip/rtp/rtp-packet.ts";
import { alawDecode, mulawEncode } from "../../../../codecs/g711.ts";
import { OpusCodec } from "../../../../codecs/opus.ts";
import { concatPcm } from "../../../../codecs/pcm.ts";
import { VirtualClock } from "../../../../src/core/clock.ts";
import { readPcapUdp } from "./pcap.ts";
import { rms, sine, toneHz } from "./tone.ts";

const SIPP = "/usr/share/sip-tester";

function rig(opts: Partial<ReceiverOptions> & Pick<ReceiverOptions, "codec" | "payloadType" | "clockRate">) {
  const frames: Int16Array[] = [];
  const digits: string[] = [];
  const rx = new RtpReceiver({
    clock: new VirtualClock(),
    frame: (pcm) => frames.push(pcm.slice()),
    dtmf: (d) => digits.push(d),
    ...opts,
  });
  return { rx, frames, digits };
}

/** `count` 20 ms PCMU packets of a tone, sequence/timestamp from `seq0`/`ts0`. */
function pcmuTone(count: number, hz = 440, seq0 = 65530, ts0 = 0xffffff00) {
  const pcm = sine(hz, 8000, 160 * count, 8000);
  const packets: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    const payload = mulawEncode(pcm.subarray(i * 160, (i + 1) * 160));
    packets.push(
      buildRtp({
        payloadType: 0,
        sequence: (seq0 + i) & 0xffff,
        timestamp: (ts0 + i * 160) >>> 0,
        ssrc: 77,
        payload,
        marker: i === 0,
      }),
    );
  }
  return { pcm, packets };
}

describe("RtpReceiver", () => {
  it("re-frames SIPp's 30 ms PCMA capture into 20 ms frames, sample for sample", () => {
    const datagrams = readPcapUdp(`${SIPP}/g711a.pcap`);
    const r = rig({ codec: "pcma", payloadType: 8, clockRate: 8000 });
    const payloads: Uint8Array[] = [];
    for (const d of datagrams) {
      expect(r.rx.handle(d.payload)).toBe(true);
      payloads.push(d.payload.subarray(12));
    }
    expect(payloads.every((p) => p.length === 240)).toBe(true);
    const all = alawDecode(Uint8Array.from(payloads.flatMap((p) => [...p])));
    const whole = Math.floor(all.length / 160);
    expect(r.frames.length).toBe(whole);
    expect(r.frames.every((f) => f.length === 160)).toBe(true);
    expect(concatPcm(r.frames)).toEqual(all.subarray(0, whole * 160));
    expect(r.rx.stats.jitter.lost).toBe(0);
  });

  it("detects each of SIPp's RFC 4733 captures as its one digit, though each repeats its end packet", () => {
    const names = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "pound", "star"];
    const r = rig({ codec: "pcmu", payloadType: 0, clockRate: 8000, telephoneEventPt: 101 });
    let packets = 0;
    for (const n of names) {
      for (const d of readPcapUdp(`${SIPP}/dtmf_2833_${n}.pcap`)) {
        r.rx.handle(d.payload);
        packets++;
      }
    }
    expect(packets).toBeGreaterThan(names.length * 3);
    expect(r.digits).toEqual(["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "#", "*"]);
    expect(r.frames).toHaveLength(0);
  });

  it("decodes PCMU across the sequence/timestamp wrap, putting reordered packets back", () => {
    const { pcm, packets } = pcmuTone(20);
    const r = rig({ codec: "pcmu", payloadType: 0, clockRate: 8000 });
    const order = [0, 1, 2, 4, 3, 5, 6, 8, 7, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19];
    for (const i of order) r.rx.handle(packets[i]!);
    expect(r.frames).toHaveLength(20);
    const got = concatPcm(r.frames);
    expect(Math.abs(toneHz(got, 8000) - 440)).toBeLessThan(2);
    expect(Math.abs(rms(got) - rms(pcm)) / rms(pcm)).toBeLessThan(0.05);
  });

  it("conceals a lost G.711 packet by repeating the last one faded, and a long gap fades to silence", () => {
    const { packets } = pcmuTone(40);
    const r = rig({ codec: "pcmu", payloadType: 0, clockRate: 8000 });
    for (let i = 0; i < 10; i++) r.rx.handle(packets[i]!);
    // One packet lost: 11 onward (60 ms past it) release the gap.
    for (let i = 11; i < 20; i++) r.rx.handle(packets[i]!);
    expect(r.frames).toHaveLength(19 + 1);
    const concealed = r.frames[10]!;
    expect(rms(concealed)).toBeGreaterThan(rms(r.frames[9]!) * 0.5);
    expect(rms(concealed)).toBeLessThan(rms(r.frames[9]!));
    // A 10-packet gap: three fading packets, two of silence (the cap), then the stream again.
    for (let i = 30; i < 40; i++) r.rx.handle(packets[i]!);
    const gap = r.frames.slice(20, 25);
    expect(gap.map((f) => rms(f) > 0)).toEqual([true, true, true, false, false]);
    expect(rms(gap[0]!)).toBeGreaterThan(rms(gap[1]!));
    expect(rms(gap[1]!)).toBeGreaterThan(rms(gap[2]!));
    expect(r.frames).toHaveLength(20 + 5 + 10);
    expect(r.rx.stats.concealedPackets).toBe(6);
    expect(r.rx.stats.jitter.lost).toBe(11);
  });

  it("decodes Opus to 16 kHz frames, concealing a lost packet with libopus", () => {
    const enc = new OpusCodec(48000, 1);
    const pcm48 = sine(600, 48000, 960 * 30, 9000);
    const r = rig({ codec: "opus", payloadType: 111, clockRate: 48000 });
    expect(r.rx.inputRate).toBe(16000);
    for (let i = 0; i < 30; i++) {
      const payload = enc.encode(pcm48.subarray(i * 960, (i + 1) * 960));
      if (i === 20) continue; // lost
      r.rx.handle(buildRtp({ payloadType: 111, sequence: i, timestamp: i * 960, ssrc: 5, payload }));
    }
    expect(r.frames).toHaveLength(30);
    expect(r.frames.every((f) => f.length === 320)).toBe(true);
    const steady = concatPcm(r.frames.slice(5, 20));
    expect(Math.abs(toneHz(steady, 16000) - 600)).toBeLessThan(5);
    expect(Math.abs(rms(steady) - 9000 / Math.SQRT2) / (9000 / Math.SQRT2)).toBeLessThan(0.2);
    expect(rms(r.frames[20]!)).toBeGreaterThan(rms(steady) * 0.2);
    expect(r.rx.stats.concealedPackets).toBe(1);
  });

  it("drops and counts garbage: short, wrong version, unknown payload type, RTCP", () => {
    const r = rig({ codec: "pcmu", payloadType: 0, clockRate: 8000, telephoneEventPt: 101 });
    const good = pcmuTone(1).packets[0]!;
    const v1 = good.slice();
    v1[0] = 0x40;
    const pt9 = good.slice();
    pt9[1] = 9;
    const rtcp = good.slice();
    rtcp[1] = 201;
    for (const bad of [new Uint8Array(5), v1, pt9, rtcp]) expect(r.rx.handle(bad)).toBe(false);
    expect(r.rx.stats.dropped).toMatchObject({ short: 1, version: 1, "payload-type": 1, rtcp: 1 });
    expect(r.rx.handle(good)).toBe(true);
    expect(r.frames).toHaveLength(1);
  });
});
