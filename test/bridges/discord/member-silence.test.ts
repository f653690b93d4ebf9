// A member who goes quiet on Discord (no packets at all) is heard as silence for long enough to end
// their turn, frame by frame on the clock, and then not at all; late packets are waited for.
import { describe, expect, it } from "vitest";
import { MemberSilence } from "../../../bridges/discord/member-silence.ts";
import { VoiceClock } from "../../../bridges/discord/voice-clock.ts";
import { VirtualClock } from "../../../src/core/clock.ts";
import type { Speaker } from "../../../src/session/transport.ts";

const ALICE: Speaker = { id: "1", name: "Alice" };
const BOB: Speaker = { id: "2", name: "Bob" };

function rig() {
  const clock = new VirtualClock();
  const frames: { at: number; who: string; silent: boolean }[] = [];
  const silence = new MemberSilence({
    clock,
    ticks: new VoiceClock(clock),
    frameSamples: 320,
    onFrame: (frame, who) =>
      frames.push({ at: clock.now(), who: who.name, silent: frame.every((s) => s === 0) }),
  });
  /** `who` speaks for `ms`: a packet every 20 ms. */
  const speak = (who: Speaker, ms: number) => {
    for (let t = 0; t < ms; t += 20) {
      clock.advance(20);
      silence.heard(who);
    }
  };
  return { clock, frames, silence, speak };
}

describe("MemberSilence", () => {
  it("feeds 20 ms silence frames for two seconds after a member's last packet, then stops", () => {
    const { clock, frames, silence, speak } = rig();
    speak(ALICE, 400);
    const lastPacketAt = clock.now();
    clock.advance(5000);
    const fed = frames.filter((f) => f.who === "Alice");
    expect(fed.every((f) => f.silent)).toBe(true);
    expect(fed.length).toBeGreaterThanOrEqual(97);
    expect(fed.length).toBeLessThanOrEqual(100);
    // Not a burst at the end: each frame within the slack of when it was due.
    const lateness = fed.map((f, i) => f.at - (lastPacketAt + 20 * (i + 1)));
    expect(Math.max(...lateness)).toBeLessThanOrEqual(80);
    expect(silence.filled).toBe(fed.length);
    clock.advance(5000);
    expect(frames.length).toBe(fed.length);
  });

  it("waits for packets that are only a little late, and starts again when the member speaks again", () => {
    const { clock, frames, silence, speak } = rig();
    // Packets arriving in pairs every 40 ms (jitter within the slack): no silence in between.
    for (let t = 0; t < 400; t += 40) {
      clock.advance(40);
      silence.heard(ALICE);
      silence.heard(ALICE);
    }
    expect(frames).toHaveLength(0);
    clock.advance(1000);
    const first = frames.length;
    expect(first).toBeGreaterThan(40);
    speak(ALICE, 200); // speaks again: the count starts over from this packet
    clock.advance(1900);
    expect(frames.length - first).toBeGreaterThan(85);
  });

  it("keeps members apart and forgets one who left", () => {
    const { clock, frames, silence, speak } = rig();
    speak(ALICE, 100);
    speak(BOB, 100);
    silence.forget(ALICE.id);
    const before = frames.length;
    clock.advance(3000);
    expect(new Set(frames.slice(before).map((f) => f.who))).toEqual(new Set(["Bob"]));
    silence.close();
  });
});
