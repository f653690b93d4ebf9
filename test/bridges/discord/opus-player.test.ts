// The packet player on a real @discordjs/voice AudioPlayer (its 20 ms audio cycle on the real timer),
// told to consume packets with no voice connection subscribed: the accounting is what is tested.
import { AudioPlayerStatus } from "@discordjs/voice";
import { afterEach, describe, expect, it } from "vitest";
import { OpusPacketPlayer } from "../../../bridges/discord/opus-player.ts";
import { OpusCodec } from "../../../codecs/opus.ts";

function packets(n: number): Uint8Array[] {
  const codec = new OpusCodec(48000, 1);
  const out: Uint8Array[] = [];
  for (let i = 0; i < n; i++) {
    const pcm = new Int16Array(960);
    for (let s = 0; s < pcm.length; s++)
      pcm[s] = Math.round(5000 * Math.sin((2 * Math.PI * 440 * (i * 960 + s)) / 48000));
    out.push(codec.encode(pcm).slice());
  }
  return out;
}

function rig() {
  const played: number[] = [];
  const waiters: Array<{ ms: number; resolve: () => void }> = [];
  const player = new OpusPacketPlayer({
    whenUnheard: "play",
    onPlayed: (ms) => {
      played.push(ms);
      for (const w of waiters.splice(0)) {
        if (ms >= w.ms) w.resolve();
        else waiters.push(w);
      }
    },
  });
  const playedAtLeast = (ms: number) =>
    new Promise<void>((resolve) => {
      if (player.playedMs() >= ms) resolve();
      else waiters.push({ ms, resolve });
    });
  const idle = () =>
    new Promise<void>((resolve) => {
      if (player.player.state.status === AudioPlayerStatus.Idle) resolve();
      else player.player.once(AudioPlayerStatus.Idle, () => resolve());
    });
  return { player, played, playedAtLeast, idle };
}

let open: OpusPacketPlayer[] = [];
afterEach(() => {
  for (const p of open) p.close();
  open = [];
});

describe("OpusPacketPlayer", () => {
  it("counts playout from the packets the player took, 20 ms each, up to what was queued", async () => {
    const r = rig();
    open.push(r.player);
    r.player.play(packets(10));
    expect(r.player.queuedMs()).toBe(200);
    r.player.play(packets(5));
    expect(r.player.queuedMs()).toBe(300);
    await r.playedAtLeast(300);
    await r.idle();
    expect(r.player.playedMs()).toBe(300);
    expect(r.played).toEqual(Array.from({ length: 15 }, (_, i) => (i + 1) * 20));
    expect(r.player.stretches).toBe(1);
  });

  it("starts a new stretch after running dry, and the position goes on from where it was", async () => {
    const r = rig();
    open.push(r.player);
    r.player.play(packets(3));
    await r.idle();
    expect(r.player.playedMs()).toBe(60);
    r.player.play(packets(4));
    await r.playedAtLeast(140);
    await r.idle();
    expect(r.player.playedMs()).toBe(140);
    expect(r.player.queuedMs()).toBe(140);
    expect(r.player.stretches).toBe(2);
  });

  it("clear() stops at once, drops the unread packets, and the next play() is all heard", async () => {
    const r = rig();
    open.push(r.player);
    r.player.play(packets(100));
    await r.playedAtLeast(100);
    const dropped = r.player.clear();
    const at = r.player.playedMs();
    expect(r.player.queuedMs()).toBe(at);
    expect(dropped).toBe(2000 - at);
    expect(r.player.player.state.status).toBe(AudioPlayerStatus.Idle);
    r.player.play(packets(5));
    expect(r.player.queuedMs()).toBe(at + 100);
    await r.playedAtLeast(at + 100);
    await r.idle();
    // Nothing of the dropped 2 s was read after the clear: only the 5 new packets.
    expect(r.player.playedMs()).toBe(at + 100);
    expect(r.player.stretches).toBe(2);
  });

  it("holds the audio while no connection can hear it (the default), playing none of it", async () => {
    const player = new OpusPacketPlayer();
    open.push(player);
    player.play(packets(5));
    await new Promise<void>((resolve) => {
      player.player.on("stateChange", (_o, n) => {
        if (n.status === AudioPlayerStatus.AutoPaused) resolve();
      });
    });
    expect(player.playedMs()).toBe(0);
    expect(player.queuedMs()).toBe(100);
  });
});
