import { afterEach, describe, expect, it } from "vitest";
import { DiscordChannelTransport } from "../../../bridges/discord/transport.ts";
import type { Speaker, TransportListener } from "../../../bridges/transport.ts";
import { silentLogger } from "../../../src/core/log.ts";

function listener() {
  const events: string[] = [];
  const frames: Array<{ first: number; speaker: Speaker | undefined }> = [];
  const l: TransportListener = {
    audio: (frame, speaker) => frames.push({ first: frame[0]!, speaker }),
    speakerLeft: (id) => events.push(`left ${id}`),
    dtmf: (d) => events.push(`dtmf ${d}`),
    played: () => {},
    ended: (reason) => events.push(`ended ${reason}`),
  };
  return { l, events, frames };
}

const open: DiscordChannelTransport[] = [];
function transport(leaves: string[] = []) {
  const t = new DiscordChannelTransport({
    info: {
      callId: "discord-1-2-1",
      transport: "discord",
      params: { guildName: "G", channelName: "Lounge" },
    },
    log: silentLogger,
    leave: async (reason) => {
      leaves.push(reason);
      t.end(`agent hung up (${reason})`);
    },
  });
  open.push(t);
  return t;
}
afterEach(() => {
  for (const t of open.splice(0)) t.end("test over");
});

describe("DiscordChannelTransport", () => {
  it("declares 16 kHz input and Opus output", () => {
    const t = transport();
    expect(t.inputRate).toBe(16000);
    expect(t.output).toEqual({ kind: "opus" });
    expect(t.info.transport).toBe("discord");
  });

  it("delivers frames with their speaker, those before attach included (copied), then live", () => {
    const t = transport();
    const alice = { id: "1", name: "Alice" };
    const bob = { id: "2", name: "Bob" };
    const buf = new Int16Array(320);
    buf[0] = 7;
    t.frame(buf, alice);
    buf[0] = 8; // the receiver reuses its buffer: the held frame must not change
    t.speakerLeft("3");
    const { l, events, frames } = listener();
    t.attach(l);
    t.frame(buf, bob);
    expect(frames).toEqual([
      { first: 7, speaker: alice },
      { first: 8, speaker: bob },
    ]);
    expect(events).toEqual(["left 3"]);
  });

  it("refuses PCM with a clear error: its output is Opus", () => {
    const t = transport();
    expect(() => t.play(new Int16Array(320))).toThrow(/Opus packets/);
  });

  it("rejects a transfer, saying why", async () => {
    const t = transport();
    await expect(t.transfer("+15550100")).rejects.toThrow(/no phone line/);
  });

  it("hangs up by leaving the channel, and the session hears the end once", async () => {
    const leaves: string[] = [];
    const t = transport(leaves);
    const { l, events } = listener();
    t.attach(l);
    await t.hangUp("end_call");
    await t.hangUp("again");
    t.end("voice connection closed");
    expect(leaves).toEqual(["end_call"]);
    expect(events).toEqual(["ended agent hung up (end_call)"]);
    expect(t.ended).toBe(true);
  });

  it("keeps queuedMs and playedMs as the port documents across play and clear", () => {
    const t = transport();
    t.attach(listener().l);
    const packet = new Uint8Array([0xf8, 0xff, 0xfe]);
    t.play({ packets: Array.from({ length: 50 }, () => packet) });
    expect(t.queuedMs()).toBe(1000);
    t.clear();
    expect(t.queuedMs()).toBe(t.playedMs());
    t.play({ packets: [packet, packet] });
    expect(t.queuedMs()).toBe(t.playedMs() + 40);
  });
});
