// The transport on virtual time, writing into an in-memory socket: pacing, playout position,
// clear, re-framing of inbound payloads of any length, hang-up and transfer.
import { describe, expect, it } from "vitest";
import {
  AudioSocketCallTransport,
  type AudioSocketSink,
} from "../../../bridges/audiosocket/call-transport.ts";
import { VirtualClock } from "../../../src/core/clock.ts";
import { silentLogger } from "../../../src/core/log.ts";
import type { TransportListener } from "../../../src/session/transport.ts";

class MemorySink implements AudioSocketSink {
  bytes: number[] = [];
  writableLength = 0;
  ended = false;
  destroyed = false;
  write(b: Uint8Array): boolean {
    for (const x of b) this.bytes.push(x);
    return true;
  }
  end(): void {
    this.ended = true;
  }
  destroy(): void {
    this.destroyed = true;
  }
  /** The frames written so far: kind and samples. */
  frames(): { kind: number; pcm: Int16Array }[] {
    const out: { kind: number; pcm: Int16Array }[] = [];
    const b = Uint8Array.from(this.bytes);
    for (let at = 0; at < b.length; ) {
      const len = (b[at + 1]! << 8) | b[at + 2]!;
      const body = b.slice(at + 3, at + 3 + len);
      out.push({ kind: b[at]!, pcm: new Int16Array(body.buffer, 0, len >> 1) });
      at += 3 + len;
    }
    return out;
  }
}

function rig(rate = 8000, leadMs = 60) {
  const clock = new VirtualClock();
  const sink = new MemorySink();
  const t = new AudioSocketCallTransport({
    connection: sink,
    callId: "40325ec2-5efd-4bd3-805f-53576e581d13",
    rate,
    log: silentLogger,
    clock,
    leadMs,
  });
  const rec = {
    frames: [] as Int16Array[],
    digits: [] as string[],
    played: [] as number[],
    ended: [] as string[],
  };
  const listener: TransportListener = {
    audio: (f) => rec.frames.push(f.slice()),
    dtmf: (d) => rec.digits.push(d),
    played: (ms) => rec.played.push(ms),
    ended: (r) => rec.ended.push(r),
  };
  return { clock, sink, t, rec, listener };
}

function ramp(n: number, from = 0): Int16Array {
  return Int16Array.from({ length: n }, (_, i) => (((from + i) * 37) % 60000) - 30000);
}

function littleEndian(pcm: Int16Array): Uint8Array {
  const out = new Uint8Array(pcm.length * 2);
  pcm.forEach((s, i) => {
    new DataView(out.buffer).setInt16(i * 2, s, true);
  });
  return out;
}

describe("AudioSocketCallTransport", () => {
  it("describes the call: UUID as callId, the connection's rate both ways", () => {
    const { t } = rig(16000);
    expect(t.info).toMatchObject({
      callId: "40325ec2-5efd-4bd3-805f-53576e581d13",
      transport: "audiosocket",
    });
    expect(t.inputRate).toBe(16000);
    expect(t.output).toEqual({ kind: "pcm", rate: 16000 });
  });

  it("paces played audio out in 20 ms frames of the connection's kind, never more than the lead ahead", () => {
    const { clock, sink, t, rec, listener } = rig(16000);
    t.attach(listener);
    const pcm = ramp(16000); // 1 s
    t.play(pcm);
    expect(t.queuedMs()).toBe(1000);
    for (let ms = 0; ms <= 1200; ms += 10) {
      const sent = sink.frames().length;
      expect(sent * 20, `at ${ms} ms`).toBeLessThanOrEqual(ms + 60);
      expect(t.playedMs()).toBe(sent * 20);
      clock.advance(10);
    }
    const frames = sink.frames();
    expect(frames.length).toBe(50);
    for (const f of frames) {
      expect(f.kind).toBe(0x12);
      expect(f.pcm.length).toBe(320);
    }
    const joined = new Int16Array(16000);
    frames.forEach((f, i) => {
      joined.set(f.pcm, i * 320);
    });
    expect(joined).toEqual(pcm);
    expect(t.playedMs()).toBe(1000);
    expect(rec.played.at(-1)).toBe(1000);
    expect(rec.played).toEqual([...rec.played].sort((a, b) => a - b));
  });

  it("pads a last partial frame with silence and counts only its real audio as played", () => {
    const { clock, sink, t, listener } = rig(8000);
    t.attach(listener);
    t.play(ramp(200)); // 25 ms
    clock.advance(200);
    const frames = sink.frames();
    expect(frames.length).toBe(2);
    expect([...frames[1]!.pcm.subarray(40)].every((s) => s === 0)).toBe(true);
    expect(t.playedMs()).toBe(25);
    expect(t.queuedMs()).toBe(25);
  });

  it("clear() drops what is not sent yet; queuedMs then equals playedMs and play resumes there", () => {
    const { clock, sink, t, listener } = rig(8000);
    t.attach(listener);
    t.play(ramp(8000));
    clock.advance(200);
    const sent = sink.frames().length;
    t.clear();
    expect(t.queuedMs()).toBe(t.playedMs());
    expect(t.playedMs()).toBe(sent * 20);
    clock.advance(1000);
    expect(sink.frames().length).toBe(sent);
    t.play(ramp(800));
    clock.advance(500);
    expect(sink.frames().length).toBe(sent + 5);
    expect(t.queuedMs()).toBe(sent * 20 + 100);
    expect(t.playedMs()).toBe(t.queuedMs());
  });

  it("re-frames inbound payloads of any length (odd byte splits too) into 20 ms frames", () => {
    const { t, rec, listener } = rig(8000);
    t.attach(listener);
    const pcm = ramp(160 * 7);
    const bytes = littleEndian(pcm);
    const cuts = [1, 4, 3, 319, 321, 2, 1, 600, 989];
    let at = 0;
    for (const n of cuts) {
      t.handleAudio(bytes, at, Math.min(bytes.length, at + n));
      at += n;
    }
    t.handleAudio(bytes, at, bytes.length);
    expect(rec.frames.length).toBe(7);
    const joined = new Int16Array(pcm.length);
    rec.frames.forEach((f, i) => {
      joined.set(f, i * 160);
    });
    expect(joined).toEqual(pcm);
  });

  it("holds events until the session attaches (audio bounded to the last second)", () => {
    const { t, rec, listener } = rig(8000);
    const bytes = littleEndian(ramp(160 * 60));
    t.handleAudio(bytes, 0, bytes.length);
    t.handleDtmf("5");
    t.attach(listener);
    expect(rec.frames.length).toBe(50);
    expect(rec.frames[0]).toEqual(ramp(160, 160 * 10));
    expect(rec.digits).toEqual(["5"]);
    expect(() => t.attach(listener)).toThrow(/twice/);
  });

  it("hangUp sends the hang-up frame, half-closes, and resolves when the socket has closed", async () => {
    const { sink, t, rec, listener } = rig(8000);
    t.attach(listener);
    t.play(ramp(8000));
    const before = sink.bytes.length;
    let done = false;
    const p = t.hangUp("caller said goodbye").then(() => {
      done = true;
    });
    expect(sink.bytes.slice(before)).toEqual([0, 0, 0]);
    expect(sink.ended).toBe(true);
    await Promise.resolve();
    expect(done).toBe(false);
    t.handleEnd("socket closed");
    await p;
    expect(rec.ended).toEqual(["hang-up (caller said goodbye)"]);
  });

  it("destroys the socket when Asterisk does not close after a hang-up", async () => {
    const { clock, sink, t, listener } = rig(8000);
    t.attach(listener);
    void t.hangUp("bye");
    clock.advance(1999);
    expect(sink.destroyed).toBe(false);
    clock.advance(1);
    expect(sink.destroyed).toBe(true);
  });

  it("rejects transfer with the reason, and Opus audio", async () => {
    const { t } = rig(8000);
    await expect(t.transfer("+15550100")).rejects.toThrow(/AudioSocket .*cannot transfer.*dialplan/);
    expect(() => t.play({ packets: [new Uint8Array(10)] })).toThrow(/plays PCM/);
  });

  it("drops outbound frames instead of piling them up when Asterisk stops reading", () => {
    const { clock, sink, t, listener } = rig(8000);
    t.attach(listener);
    sink.writableLength = 1_000_000;
    t.play(ramp(8000));
    clock.advance(2000);
    expect(sink.bytes.length).toBe(0);
    expect(t.playedMs()).toBe(1000);
  });
});
