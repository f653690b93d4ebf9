// The recognizer's trigram model read in place from sphinxbase's binary trie format (the file
// Debian's pocketsphinx-en-us installs), and the completion model on top of it.
import { readFileSync } from "node:fs";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { TrigramLm, TrigramLmFormatError } from "../../src/session/trigram-lm.ts";
import {
  lmWords,
  sharedTrigramCompletion,
  TrigramTurnCompletion,
} from "../../src/session/turn-completion.ts";
import { until } from "../helpers/until.ts";

const PATH = "/usr/share/pocketsphinx/model/en-us/en-us.lm.bin";
const lm = new TrigramLm(readFileSync(PATH));
const ids = (words: string) => words.split(" ").map((w) => lm.id(w)!);

describe("TrigramLm", () => {
  it("reads the header and the word list", () => {
    expect(lm.order).toBe(3);
    expect(lm.counts[0]).toBeGreaterThan(50_000);
    expect(lm.id("</s>")).toBe(lm.endId);
    expect(lm.id("bicycle")).toBeTypeOf("number");
    expect(lm.id("qwxzv")).toBeUndefined();
  });

  it("gives distributions that sum to one, with back-off, for contexts of every length", () => {
    // A wrong offset, bit width or back-off anywhere shows as a sum far from 1.
    const start = lm.id("<s>")!;
    for (const context of [[], ids("the"), ids("of the"), ids("opening hours"), ids("zebra quantum")]) {
      let sum = 0;
      for (let w = 0; w < lm.counts[0]!; w++) if (w !== start) sum += 10 ** lm.logProb(w, context);
      expect(sum, context.join(" ")).toBeGreaterThan(0.99);
      expect(sum, context.join(" ")).toBeLessThan(1.01);
    }
  });

  it("knows that sentences end after complete phrases, not after articles", () => {
    const end = (words: string) => 10 ** lm.logProbEnd(ids(words));
    expect(end("opening hours")).toBeGreaterThan(30 * end("check the"));
    expect(end("thank you")).toBeGreaterThan(10 * end("would like"));
  });

  it("refuses what is not a trie model", () => {
    expect(() => new TrigramLm(new TextEncoder().encode("\\data\\\nngram 1=3\n"))).toThrow(
      TrigramLmFormatError,
    );
  });
});

describe("TrigramTurnCompletion", () => {
  const model = new TrigramTurnCompletion(lm);

  it("reads transcripts as the model's words", () => {
    expect(lmWords("Is it 4567?")).toEqual(["is", "it", "seven"]);
    expect(lmWords("  I'm   'calling', ok ")).toEqual(["i'm", "calling", "ok"]);
  });

  it("asks P(</s>) of the last words, from the start of the turn when it is short", () => {
    expect(model.endProbability("what are your opening hours")!).toBeGreaterThan(
      10 * model.endProbability("i would like to check the")!,
    );
    expect(model.endProbability("goodbye")!).toBeGreaterThan(model.endProbability("the")!);
    // Nothing the model knows at the end: it cannot say.
    expect(model.endProbability("")).toBeUndefined();
    expect(model.endProbability("hello qwxzv")).toBeUndefined();
  });

  it("answers nothing until the shared model has loaded, then the same as a private one", async () => {
    const shared = sharedTrigramCompletion(PATH);
    expect(shared.endProbability("thank you")).toBeUndefined();
    await until(() => shared.endProbability("thank you") !== undefined, "the shared model", 2_000);
    expect(shared.endProbability("thank you")).toBe(model.endProbability("thank you"));
  });

  it("leaves turns to silence when the model cannot be read", async () => {
    const warned: string[] = [];
    const log = pino({ level: "warn" }, { write: (line: string) => void warned.push(line) });
    const missing = sharedTrigramCompletion("/nonexistent/en-us.lm.bin", log);
    // The read has failed (and said so): nothing more is coming.
    await until(() => warned.some((l) => l.includes("model not loaded")), "the failed read");
    expect(missing.endProbability("thank you")).toBeUndefined();
  });
});
