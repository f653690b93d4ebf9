import { afterEach, describe, expect, it } from "vitest";
import type { NegotiatedMedia } from "../../../../bridges/sip/media-port.ts";
import { buildRtp } from "../../../../bridges/sip/rtp/rtp-packet.ts";
import { alawDecode, alawEncode, mulawDecode, mulawEncode } from "../../../../codecs/g711.ts";
import { OpusCodec } from "../../../../codecs/opus.ts";
import { concatPcm } from "../../../../codecs/pcm.ts";
import { type Clock, systemClock } from "../../../../src/core/clock.ts";
import { until } from "../../../helpers/until.ts";
import { readPcapUdp } from "./pcap.ts";
import { media, openCall, Peer, type Received, type Rig } from "./rig.ts";
import { rms, sine, toneHz } from "./tone.ts";

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function peer(): Promise<Peer> {
  const p = await Peer.open();
  cleanup.push(() => p.close());
  return p;
}

async function call(
  m: NegotiatedMedia,
  mediaTimeoutMs?: number,
  opts: { attach?: boolean } = {},
): Promise<Rig> {
  const r = await openCall(m, mediaTimeoutMs, opts);
  cleanup.push(() => r.close());
  return r;
}

/** A call on the monotonic clock, as the packets are (the send thread paces on real time). */
async function realTimeCall(m: NegotiatedMedia): Promise<Rig<Clock>> {
  const r = await openCall(m, 30_000, { clock: systemClock });
  cleanup.push(() => r.close());
  return r;
}

/** Sends `pcm` (8 kHz) from the peer as 20 ms packets of `pt`, encoded with `encode`. */
async function sendG711(
  p: Peer,
  port: number,
  pcm: Int16Array,
  pt: number,
  encode: (x: Int16Array) => Uint8Array,
  ssrc = 0xcafe,
) {
  for (let i = 0; i * 160 < pcm.length; i++) {
    const payload = encode(pcm.subarray(i * 160, (i + 1) * 160));
    await p.send(
      buildRtp({ payloadType: pt, sequence: 1000 + i, timestamp: 50_000 + i * 160, ssrc, payload }),
      port,
    );
  }
}

/**
 * The send thread never runs ahead of real time: one packet per 20 ms since `t0` (taken before
 * the call opened), plus the one of the first tick. Running behind (a loaded machine) is allowed.
 */
function expectNotAhead(r: Rig<Clock>, t0: number) {
  expect(r.transport.stats.tx.packets).toBeLessThanOrEqual(Math.floor((performance.now() - t0) / 20) + 1);
}

function isSilence(p: Received, byte: number): boolean {
  return p.payload.every((b) => b === byte);
}

describe("RtpCallTransport over real sockets (G.711)", () => {
  it("sends silence to the SDP address, latches onto where the caller sends from, and carries a tone both ways", async () => {
    const sdpAddress = await peer();
    const caller = await peer();
    const t0 = performance.now();
    const r = await realTimeCall(media(sdpAddress.port));
    expect(r.transport.inputRate).toBe(8000);
    expect(r.transport.output).toEqual({ kind: "pcm", rate: 8000 });
    // Before the caller has sent anything, silence goes where the SDP says.
    await until(() => sdpAddress.received.length >= 1, "silence at the SDP address");
    expect(sdpAddress.received[0]!.marker).toBe(true);
    expect(isSilence(sdpAddress.received[0]!, 0xff)).toBe(true);

    // Caller → agent: a 440 Hz tone as PCMU.
    const tone = sine(440, 8000, 8000, 6000);
    await sendG711(caller, r.transport.localPort, tone, 0, (x) => mulawEncode(x));
    await until(() => r.events.frames.length >= 50, "50 frames from the caller");
    const heard = concatPcm(r.events.frames);
    expect(heard.length).toBe(tone.length);
    expect(Math.abs(toneHz(heard, 8000) - 440)).toBeLessThan(2);
    expect(Math.abs(rms(heard) - rms(tone)) / rms(tone)).toBeLessThan(0.05);
    await until(() => caller.received.length >= 1, "packets at the latched address");
    const atSdp = sdpAddress.received.length;

    // Agent → caller: 1 s of 1 kHz (in pieces that are not whole packets), paced, to the latched address.
    const reply = sine(1000, 8000, 8000, 7000);
    const audioBefore = r.transport.stats.tx.audioPackets;
    const audio = () => r.transport.stats.tx.audioPackets - audioBefore;
    for (let at = 0; at < reply.length; at += 1000) r.transport.play(reply.subarray(at, at + 1000));
    expect(r.transport.queuedMs()).toBe(1000);
    await until(() => audio() === 50 && r.transport.playedMs() === 1000, "the reply sent");
    expectNotAhead(r, t0);
    const sentNow = r.transport.stats.tx.packets;
    await until(() => caller.received.length + atSdp >= sentNow + 2, "the reply at the caller");
    expect(sdpAddress.received.length).toBe(atSdp);

    const got = caller.received;
    for (let i = 1; i < got.length; i++) {
      expect(got[i]!.sequence).toBe((got[i - 1]!.sequence + 1) & 0xffff);
      expect(got[i]!.timestamp).toBe((got[i - 1]!.timestamp + 160) >>> 0);
      expect(got[i]!.ssrc).toBe(got[0]!.ssrc);
    }
    const firstAudio = got.findIndex((p) => !isSilence(p, 0xff));
    expect(got[firstAudio]!.marker).toBe(true);
    expect(got.filter((p) => p.marker)).toHaveLength(1);
    const sent = mulawDecode(
      Uint8Array.from(got.slice(firstAudio, firstAudio + 50).flatMap((p) => [...p.payload])),
    );
    expect(Math.abs(toneHz(sent, 8000) - 1000)).toBeLessThan(2);
    expect(Math.abs(rms(sent) - rms(reply)) / rms(reply)).toBeLessThan(0.05);
    expect(got.slice(firstAudio + 50).every((p) => isSilence(p, 0xff))).toBe(true);

    // All of it has been heard, and the session was told, in order.
    await until(() => r.events.played.at(-1) === 1000, "the session told");
    const played = r.events.played;
    expect(played.every((v, i) => i === 0 || v > played[i - 1]!)).toBe(true);
  });

  it("pads a reply's last partial packet with silence, and counts the padding on the timeline", async () => {
    const caller = await peer();
    const r = await realTimeCall(media(caller.port));
    r.transport.play(sine(600, 8000, 250, 7000)); // one packet and 90 samples
    expect(r.transport.queuedMs()).toBe(31.25);
    await until(() => r.transport.stats.tx.audioPackets === 2, "two packets");
    expect(r.transport.queuedMs()).toBe(40);
    await until(() => r.transport.playedMs() === 40, "both heard");
  });

  it("reports what was sent as heard, and clear() drops the unsent rest at once", async () => {
    const caller = await peer();
    const r = await realTimeCall(media(caller.port, { name: "pcma", payloadType: 8, clockRate: 8000 }));
    r.transport.play(sine(500, 8000, 16000, 5000));
    await until(() => r.transport.playedMs() >= 300, "300 ms heard");
    r.transport.clear();
    // The thread sends in real time: what was sent is what was heard, and nothing more is queued.
    expect(r.transport.queuedMs()).toBe(r.transport.playedMs());
    expect(r.transport.playedMs()).toBe(r.transport.stats.tx.audioPackets * 20);
    expect(r.transport.playedMs()).toBeLessThan(2000);
    expect(r.events.played.at(-1)).toBe(r.transport.playedMs());
    const audioSent = r.transport.stats.tx.audioPackets;
    const packets = r.transport.stats.tx.packets;
    await until(() => caller.received.length >= packets + 10, "ten packets more at the caller");
    expect(r.transport.stats.tx.audioPackets).toBe(audioSent);
    const tail = caller.received.slice(-9);
    expect(tail.every((p) => isSilence(p, 0xd5))).toBe(true);
    expect(caller.received.every((p) => p.payloadType === 8)).toBe(true);
    // The next reply starts where the cleared one stopped on the call's timeline. (Read before it
    // is queued: the send thread may send it between two reads after.)
    const stoppedAt = r.transport.playedMs();
    r.transport.play(new Int16Array(160));
    expect(r.transport.queuedMs()).toBe(stoppedAt + 20);
  });

  it("keeps timing but sends nothing while the caller holds, ignores hold music, and resumes", async () => {
    const caller = await peer();
    const m = media(caller.port, { name: "pcma", payloadType: 8, clockRate: 8000 });
    const r = await realTimeCall(m);
    r.transport.play(sine(700, 8000, 40000, 5000)); // 5 s
    await until(() => r.transport.playedMs() >= 200, "the reply under way");
    r.transport.updateMedia({ ...m, direction: "recvonly" });
    const sentAtHold = r.transport.stats.tx.packets;
    await until(() => caller.received.length === sentAtHold, "packets before hold at the caller");
    const before = caller.received.at(-1)!;
    const playedAtHold = r.transport.playedMs();
    await sendG711(caller, r.transport.localPort, sine(300, 8000, 1600, 5000), 8, (x) => alawEncode(x));
    // Nothing more reaches the caller, and the music does not reach the session; the timeline runs on.
    await until(() => r.transport.stats.rx.packets === 10, "the hold music at the transport");
    await until(() => r.transport.playedMs() >= playedAtHold + 200, "time on hold");
    expect(r.events.frames).toHaveLength(0);
    expect(r.transport.stats.tx.packets).toBe(sentAtHold);
    expect(caller.received.at(-1)).toBe(before);
    r.transport.updateMedia({ ...m, direction: "sendrecv" });
    await until(() => caller.received.at(-1) !== before, "audio after resume");
    const after = caller.received.find((p) => p.sequence === ((before.sequence + 1) & 0xffff))!;
    // The stream's clock ran on through the hold: timestamps jump by the time held; sequence does not.
    expect((after.timestamp - before.timestamp) >>> 0).toBeGreaterThanOrEqual(200 * 8);
    expect(alawDecode(after.payload).some((v) => v !== 0)).toBe(true);
  });
});

describe("RtpCallTransport with early media (a 183's SDP on a call we placed)", () => {
  it("hears early media for the dialler only, sends nothing and keeps no media timeout, then the answer makes it the call's", async () => {
    const early = await peer();
    const answer = await peer();
    const heardEarly: Int16Array[] = [];
    const r = await openCall(media(early.port, undefined, { early: true }), 400, {
      clock: systemClock,
      earlyAudio: (pcm) => heardEarly.push(pcm.slice()),
    });
    cleanup.push(() => r.close());
    // Ringback from the early address: heard by the dialler, not the session; nothing goes back.
    r.transport.play(sine(700, 8000, 1600, 5000));
    await sendG711(early, r.transport.localPort, sine(425, 8000, 4000, 5000), 0, (x) => mulawEncode(x));
    await until(() => heardEarly.length >= 25, "the early media at the dialler");
    expect(Math.abs(toneHz(concatPcm(heardEarly), 8000) - 425)).toBeLessThan(2);
    // Silence from the far end for longer than the media timeout: not a dead call before the answer.
    // A quiet window, not a wait on a condition: a hang-up that does not come leaves no event.
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(r.events.frames).toHaveLength(0);
    expect(r.transport.stats.tx.packets).toBe(0);
    expect(early.received).toHaveLength(0);
    expect(r.control.hangUps).toEqual([]);
    // The 200's SDP names another address: the call's audio goes there, and what comes is the session's.
    r.transport.updateMedia(media(answer.port));
    await until(() => answer.received.length >= 3, "audio at the answer's address");
    // (Another source: the answering device, not the network's announcement.)
    await sendG711(
      answer,
      r.transport.localPort,
      sine(440, 8000, 1600, 5000),
      0,
      (x) => mulawEncode(x),
      0xbeef,
    );
    await until(() => r.events.frames.length >= 10, "the answered call's audio at the session");
    expect(Math.abs(toneHz(concatPcm(r.events.frames), 8000) - 440)).toBeLessThan(2);
    expect(heardEarly).toHaveLength(25);
    expect(early.received).toHaveLength(0);
  });
});

describe("RtpCallTransport over real sockets (Opus)", () => {
  it("sends the TTS's Opus packets as they are, one per 20 ms, and decodes the caller's Opus at 16 kHz", async () => {
    const caller = await peer();
    const r = await realTimeCall(media(caller.port, { name: "opus", payloadType: 111, clockRate: 48000 }));
    expect(r.transport.output).toEqual({ kind: "opus" });
    expect(r.transport.inputRate).toBe(16000);
    expect(() => r.transport.play(new Int16Array(960))).toThrow(/Opus packets/);

    const enc = new OpusCodec(48000, 1);
    const tts = sine(800, 48000, 960 * 25, 8000);
    const packets = Array.from({ length: 25 }, (_, i) =>
      enc.encode(tts.subarray(i * 960, (i + 1) * 960)).slice(),
    );
    const audioBefore = r.transport.stats.tx.audioPackets;
    const audio = () => r.transport.stats.tx.audioPackets - audioBefore;
    r.transport.play({ packets });
    expect(r.transport.queuedMs()).toBe(500);
    await until(() => audio() === 25 && r.transport.playedMs() === 500, "the packets sent");
    const sentNow = r.transport.stats.tx.packets;
    await until(() => caller.received.length >= sentNow, "every packet at the caller");
    const got = caller.received;
    const first = got.findIndex(
      (p) => p.payload.length === packets[0]!.length && p.payload.every((b, i) => b === packets[0]![i]),
    );
    expect(first).toBeGreaterThanOrEqual(0);
    expect(got[first]!.marker).toBe(true);
    for (let i = 0; i < 25; i++) expect(got[first + i]!.payload).toEqual(packets[i]);
    for (let i = 1; i < got.length; i++) expect(got[i]!.timestamp).toBe((got[i - 1]!.timestamp + 960) >>> 0);
    expect(got.every((p) => p.payloadType === 111)).toBe(true);

    // Caller → agent: Opus from a stereo-capable peer, decoded to 16 kHz mono frames.
    const callerEnc = new OpusCodec(48000, 2);
    const mono = sine(400, 48000, 960 * 30, 8000);
    const stereo = new Int16Array(mono.length * 2);
    for (let i = 0; i < mono.length; i++) stereo[2 * i] = stereo[2 * i + 1] = mono[i]!;
    for (let i = 0; i < 30; i++) {
      const payload = callerEnc.encode(stereo.subarray(i * 1920, (i + 1) * 1920));
      await caller.send(
        buildRtp({ payloadType: 111, sequence: i, timestamp: i * 960, ssrc: 9, payload }),
        r.transport.localPort,
      );
    }
    await until(() => r.events.frames.length >= 30, "30 frames from the caller");
    expect(r.events.frames.every((f) => f.length === 320)).toBe(true);
    const heard = concatPcm(r.events.frames.slice(5));
    expect(Math.abs(toneHz(heard, 16000) - 400)).toBeLessThan(4);
    expect(Math.abs(rms(heard) - rms(mono)) / rms(mono)).toBeLessThan(0.2);
  });
});

describe("RtpCallTransport call life", () => {
  it("hangs up after the media timeout, not counting time on hold, then ends and frees the port", async () => {
    const caller = await peer();
    const m = media(caller.port);
    const r = await call(m, 5000);
    await caller.send(
      buildRtp({ payloadType: 0, sequence: 1, timestamp: 1, ssrc: 1, payload: new Uint8Array(160) }),
      r.transport.localPort,
    );
    await until(() => r.transport.stats.rx.packets === 1, "the caller's packet");
    r.clock.advance(4000);
    await caller.send(
      buildRtp({ payloadType: 0, sequence: 2, timestamp: 161, ssrc: 1, payload: new Uint8Array(160) }),
      r.transport.localPort,
    );
    await until(() => r.transport.stats.rx.packets === 2, "the second packet");
    r.clock.advance(4990);
    expect(r.control.hangUps).toEqual([]);
    // On hold the caller may send nothing for minutes.
    r.transport.updateMedia({ ...m, direction: "inactive" });
    r.clock.advance(60_000);
    expect(r.control.hangUps).toEqual([]);
    r.transport.updateMedia({ ...m, direction: "sendrecv" });
    r.clock.advance(4990);
    expect(r.control.hangUps).toEqual([]);
    await r.clock.advanceAsync(20);
    expect(r.control.hangUps).toEqual(["media timeout"]);
    expect(r.events.ended).toEqual(["media timeout"]);
    expect(r.pool.inUse).toBe(0);
    expect(r.clock.pendingTimers).toBe(0);
  });

  it("reports DTMF from SIPp's capture and shrugs off garbage datagrams", async () => {
    const caller = await peer();
    const r = await call(media(caller.port));
    for (const d of readPcapUdp("/usr/share/sip-tester/dtmf_2833_pound.pcap"))
      await caller.send(d.payload, r.transport.localPort);
    for (const junk of [
      new Uint8Array(3),
      new Uint8Array(40).fill(0x41),
      Uint8Array.of(0x80, 200, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0),
    ])
      await caller.send(junk, r.transport.localPort);
    await until(() => {
      const d = r.transport.stats.rx.dropped;
      return d.short + d.version + d.rtcp === 3;
    }, "the garbage counted");
    await until(() => r.events.digits.length === 1, "the digit");
    expect(r.events.digits).toEqual(["#"]);
    expect(r.events.frames).toHaveLength(0);
  });

  it("passes on digits sent by SIP INFO, and one press sent both ways (RFC 4733 and INFO) once", async () => {
    const caller = await peer();
    const r = await call(media(caller.port));
    for (const d of readPcapUdp("/usr/share/sip-tester/dtmf_2833_pound.pcap"))
      await caller.send(d.payload, r.transport.localPort);
    await until(() => r.events.digits.length === 1, "the digit by RTP");
    // The PBX's INFO for the same press: dropped. Then a new press, by INFO only.
    r.transport.digitFromInfo("#");
    r.transport.digitFromInfo("7");
    r.clock.advance(600);
    // The same key again, later: a second press.
    r.transport.digitFromInfo("#");
    expect(r.events.digits).toEqual(["#", "7", "#"]);
  });

  it("ends once when signalling says so, freeing the port; hang-up and transfer go to signalling", async () => {
    const caller = await peer();
    const r = await call(media(caller.port));
    await r.transport.transfer("sip:desk@example.com");
    expect(r.control.transfers).toEqual(["sip:desk@example.com"]);
    await expect(r.transport.transfer(" ")).rejects.toThrow(/target is empty/);
    await r.transport.hangUp("caller said bye");
    expect(r.control.hangUps).toEqual(["caller said bye"]);
    expect(r.events.ended).toEqual(["hang-up (caller said bye)"]);
    r.transport.end("BYE");
    await r.transport.hangUp("again");
    expect(r.events.ended).toHaveLength(1);
    expect(r.control.hangUps).toHaveLength(1);
    expect(r.pool.inUse).toBe(0);
    await expect(r.transport.transfer("sip:x@y")).rejects.toThrow(/ended/);
    // Nothing is sent or received any more.
    const sent = r.transport.stats.tx.packets;
    r.clock.advance(1000);
    expect(r.transport.stats.tx.packets).toBe(sent);
  });

  it("holds what comes before the session attaches (the last second of audio, every digit) and delivers it on attach", async () => {
    const caller = await peer();
    const r = await call(media(caller.port), 30_000, { attach: false });
    await sendG711(caller, r.transport.localPort, sine(440, 8000, 8000 * 2, 4000), 0, (x) => mulawEncode(x));
    for (const d of readPcapUdp("/usr/share/sip-tester/dtmf_2833_5.pcap"))
      await caller.send(d.payload, r.transport.localPort);
    await until(
      () => r.transport.stats.rx.frames === 100 && r.transport.stats.rx.dtmfPackets > 0,
      "audio and a digit",
    );
    expect(r.events.frames).toHaveLength(0);
    r.attach();
    expect(r.events.frames).toHaveLength(50);
    expect(r.events.digits).toEqual(["5"]);
    expect(() => r.transport.attach({ audio() {}, dtmf() {}, played() {}, ended() {} })).toThrow(/twice/);
  });

  it("keeps its codec when a re-INVITE tries to change it, and follows a new address", async () => {
    const first = await peer();
    const second = await peer();
    const m = media(first.port);
    const r = await call(m);
    r.transport.updateMedia({ ...m, codec: { name: "opus", payloadType: 111, clockRate: 48000 } });
    expect(r.transport.output).toEqual({ kind: "pcm", rate: 8000 });
    r.transport.updateMedia({ ...m, remote: { address: "127.0.0.1", port: second.port } });
    r.clock.advance(100);
    await until(() => second.received.length >= 5, "packets at the new address");
    expect(second.received.every((p) => p.payloadType === 0)).toBe(true);
  });
});
