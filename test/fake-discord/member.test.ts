// What a simulated member makes of the packets it hears (no network: hear() is fed directly).

import { describe, expect, it } from "vitest";
import { OpusCodec } from "../../codecs/opus.ts";
import { levelDbfs } from "../../codecs/pcm.ts";
import { SILENCE_FRAME, SimulatedMember } from "./member.ts";

function toneFrame(codec: OpusCodec): Buffer {
  const frame = new Int16Array(1920);
  for (let i = 0; i < 960; i++) {
    const v = Math.round(8000 * Math.sin((i * 2 * Math.PI * 440) / 48000));
    frame[2 * i] = v;
    frame[2 * i + 1] = v;
  }
  return Buffer.from(codec.encode(frame));
}

describe("SimulatedMember hearing", () => {
  it("splits what it hears into speech spans by arrival time and keeps the gaps on its timeline", () => {
    const member = new SimulatedMember({ userId: "1", name: "m" }, 5);
    const codec = new OpusCodec(48000, 2);
    const tone = toneFrame(codec);
    // 25 frames from t = 1000 ms, Discord's five silence frames, then 10 frames from t = 2000 ms.
    for (let i = 0; i < 25; i++) member.hear("bot", tone, 1000 + 20 * i);
    for (let i = 0; i < 5; i++) member.hear("bot", SILENCE_FRAME, 1500 + 20 * i);
    for (let i = 0; i < 10; i++) member.hear("bot", tone, 2000 + 20 * i);
    expect(member.agentSpeechSpans()).toEqual([
      { start: 1000, end: 1500 },
      { start: 2000, end: 2200 },
    ]);
    expect(member.heard().length).toBe(40 * 960);
    const { startAt, pcm } = member.heardTimeline();
    expect(startAt).toBe(1000);
    expect(pcm.length).toBe(60 * 960); // 1000 → 2200 ms
    expect(levelDbfs(pcm.subarray(30 * 960, 50 * 960))).toBeLessThan(-80); // the gap is silent
    expect(levelDbfs(pcm.subarray(51 * 960, 60 * 960))).toBeGreaterThan(-30);
    expect(member.hearingStats).toEqual({
      packets: 40,
      daveDecrypted: 0,
      daveFailures: 0,
      opusFailures: 0,
      clearDropped: 0,
    });
  });

  it("counts packets it cannot decode instead of recording them", () => {
    const member = new SimulatedMember({ userId: "1", name: "m" }, 5);
    member.hear("bot", Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff]), 0);
    expect(member.hearingStats.opusFailures).toBe(1);
    expect(member.heardFrames()).toHaveLength(0);
  });

  it("cannot speak before it is in a call with the bot", async () => {
    const member = new SimulatedMember({ userId: "1", name: "m" }, 5);
    await expect(member.say({ pcm: new Int16Array(320), rate: 16000 })).rejects.toThrow(
      /not in a voice call/,
    );
  });
});
