// Agent audio in either output format: durations, what is left after part was heard (Opus cut
// at packet boundaries), and pieces joined.
import { describe, expect, it } from "vitest";
import { audioFrom, audioMs, concatAudio } from "../../src/session/agent-audio.ts";
import type { OpusPackets } from "../../src/session/transport.ts";

const PCM8K = { kind: "pcm", rate: 8000 } as const;
const OPUS = { kind: "opus" } as const;
const packets = (n: number): OpusPackets => ({
  packets: Array.from({ length: n }, (_, i) => new Uint8Array([0xf8, i])),
});

describe("agent audio", () => {
  it("measures PCM by its rate and Opus by its packets", () => {
    expect(audioMs(new Int16Array(800), PCM8K)).toBe(100);
    expect(audioMs(packets(7), OPUS)).toBe(140);
  });

  it("resumes PCM at the sample and Opus at the packet that was playing", () => {
    const pcm = new Int16Array(800).map((_, i) => i);
    const { rest, startMs } = audioFrom(pcm, 30, PCM8K);
    expect(startMs).toBe(30);
    expect((rest as Int16Array)[0]).toBe(240);
    const opus = audioFrom(packets(10), 50, OPUS);
    expect(opus.startMs).toBe(40); // the packet at 40-60 ms was cut: it is heard again whole
    expect((opus.rest as OpusPackets).packets.map((p) => p[1])).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    expect((audioFrom(packets(3), 0, OPUS).rest as OpusPackets).packets).toHaveLength(3);
    expect((audioFrom(packets(3), 500, OPUS).rest as OpusPackets).packets).toHaveLength(0);
  });

  it("joins pieces of one format", () => {
    const joined = concatAudio([new Int16Array([1, 2]), new Int16Array([3])], PCM8K);
    expect([...(joined as Int16Array)]).toEqual([1, 2, 3]);
    expect((concatAudio([packets(2), packets(3)], OPUS) as OpusPackets).packets).toHaveLength(5);
  });
});
