// The history's token estimate against the o200k tokenizer it replaces in the bridge: never
// fewer tokens on English chat text (a budget it keeps is kept), not many more.
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import { clipTokens, estimateTokens } from "../../src/session/token-estimate.ts";

const LINES = [
  "Thanks for calling Acme Bikes. How can I help you?",
  "We're open Monday to Friday, nine to six, and Saturday ten to four.",
  "Sorry, where is your shop? I couldn't find it on the map yesterday.",
  "My order number is 48213-77, placed on 2026-11-24; it hasn't arrived.",
  "Caller: I'd like to change the delivery address to 221B Baker Street, London NW1 6XE!",
  'Agent: {"order_id":"A-1093","status":"shipped","eta":"Thursday"}',
  "Earlier in this call (older turns, shortened): the caller asked about helmets, sizes and prices.",
];

describe("token estimate", () => {
  it("counts at least what o200k counts on chat text, and at most half again as much", () => {
    let estimated = 0;
    let exact = 0;
    for (const line of LINES) {
      const e = estimateTokens(line);
      const x = countTokens(line);
      expect(e, line).toBeGreaterThanOrEqual(x);
      estimated += e;
      exact += x;
    }
    expect(estimated / exact).toBeLessThan(1.5);
    expect(estimateTokens("")).toBe(0);
  });

  it("clips to whole pieces within the budget, marked as cut, and leaves text that fits alone", () => {
    const line = LINES[1]!;
    expect(clipTokens(line, 100)).toBe(line);
    const cut = clipTokens(line, 6);
    expect(cut.endsWith("…")).toBe(true);
    expect(line.startsWith(cut.slice(0, -1))).toBe(true);
    expect(estimateTokens(cut)).toBeLessThanOrEqual(6);
  });
});
