// `--softer DB` (bench/lib/turns-softer.ts): callers speak over the agent's reply DB softer than
// they asked their question, and nothing else of the call moves: the room stays where it was.
import { describe, expect, it } from "vitest";
import { activeLevelDb } from "../../bench/lib/turns-backgrounds.ts";
import { CALL_RATE, espeakSynth, type TurnCase } from "../../bench/lib/turns-cases.ts";
import { underRoom } from "../../bench/lib/turns-noisy.ts";
import { parseSofter } from "../../bench/lib/turns-softer.ts";
import { mixPcm } from "../helpers/speech.ts";

const at = (ms: number) => Math.round((ms * CALL_RATE) / 1000);

/** A question at 1 s of an 8 s call (the real espeak-ng), then "wait, hold on" over the reply at 5 s. */
function overReplyCase(): TurnCase {
  const question = espeakSynth.speak("Where are you located?", { voice: "en-gb", speed: 160 });
  const wait = espeakSynth.speak("Wait, hold on.", { voice: "en-gb", speed: 160 });
  const caller = mixPcm(mixPcm(new Int16Array(at(8000)), question, at(1000)), wait, at(5000));
  return {
    id: "interrupt-1",
    category: "interrupt",
    text: "Wait, hold on.",
    voice: "en-gb",
    speed: 160,
    over: "reply",
    caller,
    startMs: 5000,
    endMs: 5000 + (wait.length * 1000) / CALL_RATE,
    questionStartMs: 1000,
    questionEndMs: 1000 + (question.length * 1000) / CALL_RATE,
    maxSeconds: 8,
  };
}

describe("callers who speak over the agent softer than they asked", () => {
  it("play the sound over the reply that much softer, the question and the room as they were", () => {
    const c = overReplyCase();
    const hiss = [{ kind: "hiss", belowDb: 24 }] as const;
    const [as] = underRoom([c], hiss, 0, 5, 0);
    const [softer] = underRoom([c], hiss, 0, 5, 6);
    expect(softer!.noiseDbfs).toBe(as!.noiseDbfs);
    // Before the labelled sound (the question, the room) and after it: the same samples.
    expect(softer!.caller.subarray(0, at(c.startMs))).toEqual(as!.caller.subarray(0, at(c.startMs)));
    expect(softer!.caller.subarray(at(c.endMs))).toEqual(as!.caller.subarray(at(c.endMs)));
    // The sound itself: the caller's voice 6 dB softer, the same hiss under it (mixing is a sum).
    const k = 10 ** (-6 / 20);
    let worst = 0;
    for (let i = at(c.startMs); i < at(c.endMs); i++) {
      const lessBy = as!.caller[i]! - softer!.caller[i]!;
      worst = Math.max(worst, Math.abs(lessBy - c.caller[i]! * (1 - k)));
    }
    expect(worst).toBeLessThanOrEqual(2); // rounding, twice
    expect(activeLevelDb(softer!.caller.subarray(at(c.startMs), at(c.endMs)))).toBeLessThan(
      activeLevelDb(as!.caller.subarray(at(c.startMs), at(c.endMs))) - 5,
    );
    // A case with no question before its sound is left as it was.
    const greeting: TurnCase = {
      ...c,
      over: "greeting",
      questionStartMs: undefined,
      questionEndMs: undefined,
    };
    expect(underRoom([greeting], hiss, 0, 5, 6)[0]!.caller).toEqual(
      underRoom([greeting], hiss, 0, 5, 0)[0]!.caller,
    );
  });

  it("takes dB, and says which flag was wrong", () => {
    expect(parseSofter(undefined)).toBeUndefined();
    expect(parseSofter("6")).toBe(6);
    expect(() => parseSofter("-3")).toThrow(/--softer wants how many dB softer/);
    expect(() => parseSofter("much")).toThrow(/--softer/);
    expect(() => parseSofter("")).toThrow(/--softer/);
  });
});
