import { describe, expect, it } from "vitest";
import { DISCORD_INPUT_RATE, MemberReceiver } from "../../../bridges/discord/member-receiver.ts";
import type { Speaker } from "../../../bridges/transport.ts";
import { OpusCodec } from "../../../codecs/opus.ts";

/** What Discord relays for a member: 48 kHz stereo Opus packets of `frameMs`, a tone in both channels. */
function discordPackets(hz: number, ms: number, frameMs = 20): Uint8Array[] {
  const codec = new OpusCodec(48000, 2);
  const per = (48000 * frameMs) / 1000;
  const out: Uint8Array[] = [];
  let t = 0;
  for (let done = 0; done < ms; done += frameMs) {
    const pcm = new Int16Array(per * 2);
    for (let i = 0; i < per; i++, t++) {
      const v = Math.round(8000 * Math.sin((2 * Math.PI * hz * t) / 48000));
      pcm[2 * i] = v;
      pcm[2 * i + 1] = v;
    }
    out.push(codec.encode(pcm).slice());
  }
  return out;
}

/** Tone frequency from zero crossings of the 16 kHz mono frames, skipping the codec's start-up. */
function frequencyOf(frames: Int16Array[]): number {
  const pcm = frames.slice(5).flatMap((f) => [...f]);
  let crossings = 0;
  for (let i = 1; i < pcm.length; i++) if (pcm[i - 1]! < 0 !== pcm[i]! < 0) crossings++;
  return (crossings / 2) * (DISCORD_INPUT_RATE / pcm.length);
}

function collector(speaker: Speaker) {
  const frames: Int16Array[] = [];
  const tags: Speaker[] = [];
  const receiver = new MemberReceiver({
    speaker,
    onFrame: (frame, who) => {
      frames.push(frame.slice());
      tags.push(who);
    },
  });
  return { receiver, frames, tags };
}

describe("MemberReceiver", () => {
  it("decodes 48 kHz stereo Opus to 20 ms 16 kHz mono frames tagged with the member", () => {
    const alice = { id: "111", name: "Alice" };
    const c = collector(alice);
    for (const p of discordPackets(440, 1000)) c.receiver.push(p);
    expect(c.frames).toHaveLength(50);
    for (const f of c.frames) expect(f.length).toBe(320);
    expect(new Set(c.tags)).toEqual(new Set([alice]));
    expect(frequencyOf(c.frames)).toBeGreaterThan(420);
    expect(frequencyOf(c.frames)).toBeLessThan(460);
  });

  it("cuts longer packets (60 ms) into 20 ms frames", () => {
    const c = collector({ id: "1", name: "A" });
    for (const p of discordPackets(300, 600, 60)) c.receiver.push(p);
    expect(c.frames).toHaveLength(30);
    expect(frequencyOf(c.frames)).toBeGreaterThan(280);
    expect(frequencyOf(c.frames)).toBeLessThan(320);
  });

  it("keeps two members apart when their packets interleave (one decoder each)", () => {
    const a = collector({ id: "1", name: "Alice" });
    const b = collector({ id: "2", name: "Bob" });
    const pa = discordPackets(440, 800);
    const pb = discordPackets(1000, 800);
    for (let i = 0; i < pa.length; i++) {
      a.receiver.push(pa[i]!);
      b.receiver.push(pb[i]!);
    }
    expect(frequencyOf(a.frames)).toBeGreaterThan(420);
    expect(frequencyOf(a.frames)).toBeLessThan(460);
    expect(frequencyOf(b.frames)).toBeGreaterThan(970);
    expect(frequencyOf(b.frames)).toBeLessThan(1030);
    expect(a.tags.every((t) => t.name === "Alice")).toBe(true);
    expect(b.tags.every((t) => t.name === "Bob")).toBe(true);
  });

  it("counts a packet libopus cannot decode and goes on with the next", () => {
    const bad: Error[] = [];
    const frames: Int16Array[] = [];
    const r = new MemberReceiver({
      speaker: { id: "1", name: "A" },
      onFrame: (f) => frames.push(f.slice()),
      onBadPacket: (err) => bad.push(err),
    });
    // A TOC byte announcing a code-3 packet with no frame count: invalid.
    r.push(new Uint8Array([0x03]));
    for (const p of discordPackets(440, 100)) r.push(p);
    expect(bad).toHaveLength(1);
    expect(r.badPackets).toBe(1);
    expect(frames).toHaveLength(5);
  });

  it("stop() drops a partly filled frame", () => {
    const c = collector({ id: "1", name: "A" });
    const [p60] = discordPackets(440, 60, 60);
    const [p10] = discordPackets(440, 10, 10);
    c.receiver.push(p10!); // half a frame
    c.receiver.stop();
    c.receiver.push(p60!);
    expect(c.frames).toHaveLength(3);
  });
});
