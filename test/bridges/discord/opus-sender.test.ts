// The agent's packet sender on the shared 20 ms voice clock (virtual time here): one packet per tick,
// five silence frames after a stretch, nothing while the outlet is closed (DAVE not ready), clear()
// at once; several senders share one wake-up.
import { describe, expect, it } from "vitest";
import { OpusPacketSender, type PacketOutlet, SILENCE_FRAME } from "../../../bridges/discord/opus-sender.ts";
import { VoiceClock } from "../../../bridges/discord/voice-clock.ts";
import { VirtualClock } from "../../../src/core/clock.ts";

const packets = (n: number, tag = 1) => Array.from({ length: n }, (_, i) => Uint8Array.of(tag, i, 0xaa));

function rig() {
  const clock = new VirtualClock();
  const voice = new VoiceClock(clock);
  const sent: string[] = [];
  let open = true;
  const outlet: PacketOutlet = {
    open: () => open,
    send: (p) => sent.push(p.equals(SILENCE_FRAME) ? "silence" : `p${p[1]}`),
    speaking: (on) => sent.push(on ? "speaking" : "not speaking"),
  };
  const played: number[] = [];
  const sender = new OpusPacketSender({ clock: voice, onPlayed: (ms) => played.push(ms) });
  sender.connect(outlet);
  return { clock, voice, sender, sent, played, setOpen: (o: boolean) => (open = o) };
}

describe("OpusPacketSender", () => {
  it("sends one packet per 20 ms tick, then five silence frames and stops speaking", () => {
    const r = rig();
    r.sender.play(packets(3));
    expect(r.sender.queuedMs()).toBe(60);
    r.clock.advance(20);
    expect(r.sent).toEqual(["p0"]);
    r.clock.advance(200);
    expect(r.sent).toEqual(["p0", "p1", "p2", ...Array(5).fill("silence"), "not speaking"]);
    expect(r.played).toEqual([20, 40, 60]);
    expect(r.sender.playedMs()).toBe(60);
    expect(r.sender.stretches).toBe(1);
    expect(r.voice.active).toBe(0);
  });

  it("holds its packets while the outlet is closed (DAVE not ready) and goes on when it opens", () => {
    const r = rig();
    r.setOpen(false);
    r.sender.play(packets(2));
    r.clock.advance(200);
    expect(r.sent).toEqual([]);
    expect(r.sender.playedMs()).toBe(0);
    expect(r.sender.heldTicks).toBe(10);
    r.setOpen(true);
    r.clock.advance(40);
    expect(r.sent).toEqual(["p0", "p1"]);
    expect(r.sender.playedMs()).toBe(40);
  });

  it("clear() stops at once, without silence, and counts what it dropped", () => {
    const r = rig();
    r.sender.play(packets(10));
    r.clock.advance(60);
    const dropped = r.sender.clear();
    expect(dropped).toBe(140);
    expect(r.sender.queuedMs()).toBe(60);
    r.clock.advance(200);
    expect(r.sent).toEqual(["p0", "p1", "p2", "not speaking"]);
    r.sender.play(packets(1, 2));
    r.clock.advance(20);
    expect(r.sent.at(-1)).toBe("p0");
    expect(r.sender.stretches).toBe(2);
  });

  it("shares one wake-up between channels", () => {
    const r = rig();
    const other = new OpusPacketSender({ clock: r.voice });
    const sentB: number[] = [];
    other.connect({ open: () => true, send: (p) => sentB.push(p[0]!), speaking: () => {} });
    r.sender.play(packets(2));
    other.play(packets(2, 7));
    expect(r.voice.active).toBe(2);
    r.clock.advance(40);
    expect(r.sent).toEqual(["p0", "p1"]);
    expect(sentB).toEqual([7, 7]);
    expect(r.clock.pendingTimers).toBe(1);
  });
});
