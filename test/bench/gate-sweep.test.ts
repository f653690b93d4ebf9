// The offline gate sweep (bench/lib/gate-sweep.ts): the runs it plays, and what it reports moved
// between two sweeps, which is what the notes quote for each gate change.
import { describe, expect, it } from "vitest";
import {
  compareSweeps,
  type GateSummary,
  parseSweep,
  recordedRooms,
  sweepRuns,
} from "../../bench/lib/gate-sweep.ts";

const summary = (over: Partial<GateSummary> = {}): GateSummary => ({
  missed: 0,
  coughs: 0,
  spurious: 0,
  false_barge_in: [],
  missed_barge_in: [],
  greeting_stopped: [],
  cut_short: [],
  held_open: [],
  resumed_late: [],
  ...over,
});
const line = (label: string, s: GateSummary) => `${label} ${JSON.stringify({ noise: "x", cases: 90, ...s })}`;

describe("gate sweep", () => {
  it("plays every room at two draws under the line's hiss, and the flite set under seven", () => {
    const runs = sweepRuns("/r");
    expect(runs.filter((r) => r.label.startsWith("flite-"))).toHaveLength(7);
    expect(runs.find((r) => r.label === "/r/conv.wav:10/1")?.args).toEqual([
      "/r/conv.wav:10,hiss:24",
      "--draw",
      "1",
    ]);
    expect(runs.find((r) => r.label === "flite-talker:10")?.args).toEqual([
      "talker:10,hiss:24",
      "--set",
      "flite",
    ]);
    expect(new Set(runs.map((r) => r.label)).size).toBe(runs.length);
    expect(recordedRooms().sort()).toEqual(
      ["bus", "car", "conv", "far", "keys", "kitchen", "pa", "siren", "tv", "vacuum"].sort(),
    );
  });

  it("reports the figures that moved, the cases gone and come, and the totals", () => {
    const before = parseSweep(
      [
        line("a/0", summary({ spurious: 3, false_barge_in: ["backchannel-11"] })),
        line("b/0", summary({ missed: 1 })),
        line("c/0", summary()),
        "d/0 failed: exit 1",
      ].join("\n"),
    );
    const after = parseSweep(
      [
        line("a/0", summary({ spurious: 5, false_barge_in: ["backchannel-5"] })),
        line("b/0", summary({ missed: 1 })),
        line("d/0", summary()),
      ].join("\n"),
    );
    const { lines, totals } = compareSweeps(before, after);
    expect(lines).toEqual([
      "a/0  spurious 3->5; false_barge_in 1->1 -[backchannel-11] +[backchannel-5]",
      "d/0 failed before",
    ]);
    // Over the runs both sweeps have and both ran: c/0 is in one only, d/0 failed in one.
    expect(totals.spurious).toEqual([3, 5]);
    expect(totals.missed).toEqual([1, 1]);
    expect(totals.false_barge_in).toEqual([1, 1]);
  });

  it("counts a figure a sweep made before it was counted as none", () => {
    const before = parseSweep(line("a/0", summary()));
    const after = parseSweep(line("a/0", summary({ resume_unheard: ["pause-32"] })));
    const { lines, totals } = compareSweeps(before, after);
    expect(lines).toEqual(["a/0  resume_unheard 0->1"]);
    expect(totals.resume_unheard).toEqual([0, 1]);
  });
});
