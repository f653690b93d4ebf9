// Members' packets wait for the voice clock's next tick and are then decoded together, every one of
// them, in the order they came; a member leaving gets what they said first; an ended conversation
// takes nothing more.
import { describe, expect, it } from "vitest";
import { MemberReceiver } from "../../../bridges/discord/member-receiver.ts";
import { ReceiveInbox } from "../../../bridges/discord/receive-inbox.ts";
import { VoiceClock } from "../../../bridges/discord/voice-clock.ts";
import { OpusCodec } from "../../../codecs/opus.ts";
import { VirtualClock } from "../../../src/core/clock.ts";
import type { Speaker } from "../../../src/session/transport.ts";

/** 20 ms stereo 48 kHz packets whose level says which one each was (packet i at 1000 × (i + 1)). */
function packets(n: number): Buffer[] {
  const codec = new OpusCodec(48000, 2);
  return Array.from({ length: n }, (_, i) => {
    const pcm = new Int16Array(960 * 2).fill(1000 * (i + 1));
    for (let k = 0; k < pcm.length; k += 4) pcm[k] = -pcm[k]!;
    return Buffer.from(codec.encode(pcm));
  });
}

function rig() {
  const clock = new VirtualClock();
  const ticks = new VoiceClock(clock);
  const inbox = new ReceiveInbox(ticks);
  const heard: Array<{ at: number; who: string }> = [];
  const member = (name: string) =>
    new MemberReceiver({
      speaker: { id: name, name } as Speaker,
      onFrame: (_f, who) => heard.push({ at: clock.now(), who: who.name }),
    });
  return { clock, ticks, inbox, heard, member };
}

describe("ReceiveInbox", () => {
  it("decodes nothing until the next 20 ms tick, then every member's packets in arrival order", () => {
    const { clock, inbox, heard, member } = rig();
    const alice = member("alice");
    const bob = member("bob");
    const p = packets(3);
    inbox.push(alice, p[0]!);
    clock.advance(5);
    inbox.push(bob, p[1]!);
    inbox.push(alice, p[2]!);
    expect(heard).toEqual([]);
    expect(inbox.pending).toBe(3);
    clock.advance(15);
    expect(heard.map((h) => h.who)).toEqual(["alice", "bob", "alice"]);
    expect(heard.every((h) => h.at === 20)).toBe(true);
    expect(inbox.pending).toBe(0);
    expect(alice.frames).toBe(2);
  });

  it("steps only while packets come (the clock's wake-up stops with them)", () => {
    const { clock, ticks, inbox, member } = rig();
    const alice = member("alice");
    const [a, b] = packets(2);
    inbox.push(alice, a!);
    expect(ticks.active).toBe(1);
    clock.advance(20);
    expect(ticks.active).toBe(0);
    inbox.push(alice, b!);
    expect(ticks.active).toBe(1);
    clock.advance(20);
    expect(alice.frames).toBe(2);
  });

  it("hands a leaving member's packets over at once, and takes nothing once closed", () => {
    const { clock, inbox, heard, member } = rig();
    const alice = member("alice");
    const [a, b] = packets(2);
    inbox.push(alice, a!);
    inbox.flush();
    expect(heard).toHaveLength(1);
    inbox.push(alice, b!);
    inbox.close();
    inbox.push(alice, b!);
    clock.advance(100);
    expect(heard).toHaveLength(1);
  });

  it("keeps going after a delivery that throws (the next tick starts clean)", () => {
    const { clock, inbox, member } = rig();
    const [a, b] = packets(2);
    const bad = new MemberReceiver({
      speaker: { id: "x", name: "x" } as Speaker,
      onFrame: () => {
        throw new Error("session failed");
      },
    });
    const alice = member("alice");
    inbox.push(bad, a!);
    expect(() => clock.advance(20)).toThrow("session failed");
    inbox.push(alice, b!);
    clock.advance(20);
    expect(alice.frames).toBe(1);
    expect(inbox.pending).toBe(0);
  });
});
