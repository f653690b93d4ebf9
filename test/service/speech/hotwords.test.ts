import { describe, expect, it } from "vitest";
import { hotwordHits, hotwordTokens } from "../../../src/service/engines/asr/hotwords.ts";

describe("hotwords", () => {
  it("tokenizes hotwords into lower-case dictionary words", () => {
    expect(hotwordTokens("Account Balance!")).toEqual(["account", "balance"]);
    expect(hotwordTokens("24/7 don't")).toEqual(["don't"]);
  });

  it("counts the words of a candidate covered by whole hotword phrases", () => {
    const phrases = [["account", "balance"], ["agent"], ["balance"]];
    expect(hotwordHits("check my account balance".split(" "), phrases)).toBe(2);
    expect(hotwordHits("check my account".split(" "), phrases)).toBe(0);
    expect(hotwordHits("agent agent please".split(" "), phrases)).toBe(2);
    expect(hotwordHits("balance of the account".split(" "), phrases)).toBe(1);
  });
});
