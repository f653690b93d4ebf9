import { describe, expect, it } from "vitest";
import { hotwordArpa, hotwordKey, hotwordTokens } from "../../../src/service/engines/asr/hotwords.ts";

describe("hotword language model", () => {
  it("tokenizes hotwords into lower-case dictionary words", () => {
    expect(hotwordTokens("Account Balance!")).toEqual(["account", "balance"]);
    expect(hotwordTokens("24/7 don't")).toEqual(["don't"]);
  });
  it("keys a list independently of order and duplicates", () => {
    expect(hotwordKey([["b"], ["a", "c"], ["b"]])).toBe(hotwordKey([["a", "c"], ["b"]]));
  });
  it("writes a consistent ARPA bigram model", () => {
    const arpa = hotwordArpa([["account", "balance"], ["agent"]]);
    const lines = arpa.split("\n");
    const count = (section: string) => {
      const start = lines.indexOf(section) + 1;
      let n = 0;
      while (lines[start + n]) n++;
      return n;
    };
    expect(arpa).toContain("ngram 1=5");
    expect(count("\\1-grams:")).toBe(5);
    expect(arpa).toContain("ngram 2=5");
    expect(count("\\2-grams:")).toBe(5);
    expect(arpa).toMatch(/^-?\d+\.\d+ account balance$/m);
    expect(arpa.trim().endsWith("\\end\\")).toBe(true);
    // unigram probabilities of real words sum to one with </s>
    const probs = lines
      .slice(lines.indexOf("\\1-grams:") + 1)
      .filter((l) => l && !l.includes("<s>") && /^-?\d/.test(l))
      .slice(0, 4)
      .map((l) => 10 ** Number(l.split(" ")[0]));
    expect(probs.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 3);
  });
});
