import { describe, expect, it } from "vitest";
import { soundsUnfinished } from "../../src/session/end-of-turn.ts";

describe("soundsUnfinished", () => {
  it("waits after conjunctions, articles, fillers and 'can you'", () => {
    for (const t of ["i want to check the", "my order number is", "and", "um", "can you", "i'd like to,"]) {
      expect(soundsUnfinished(t), t).toBe(true);
    }
  });
  it("ends complete-sounding turns, including 'please' and 'thank you'", () => {
    for (const t of [
      "where are you located",
      "thank you",
      "where can i find you",
      "yes please",
      "goodbye.",
    ]) {
      expect(soundsUnfinished(t), t).toBe(false);
    }
  });
  it("treats nothing recognized as unfinished", () => {
    expect(soundsUnfinished("  ")).toBe(true);
  });
});
