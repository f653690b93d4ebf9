import { describe, expect, it } from "vitest";
import { inverseNormalize, mayContinueNumber } from "../../../src/service/engines/asr/itn.ts";

const itn = (s: string) =>
  inverseNormalize(s.split(" "))
    .map((t) => t.text)
    .join(" ");

describe("inverse text normalization", () => {
  it("turns cardinals into digits", () => {
    expect(itn("i owe one hundred and twenty three dollars")).toBe("i owe 123 dollars");
    expect(itn("two thousand five hundred")).toBe("2500");
    expect(itn("forty two")).toBe("42");
    expect(itn("three million")).toBe("3000000");
  });
  it("reads runs of single digits as one digit string", () => {
    expect(itn("my number is five five five one two three four")).toBe("my number is 5551234");
    expect(itn("order one oh seven")).toBe("order 107");
  });
  it("keeps separate numbers apart", () => {
    expect(itn("twenty twenty")).toBe("20 20");
    expect(itn("twelve three")).toBe("12 3");
  });
  it("handles decimals and ordinals", () => {
    expect(itn("three point five")).toBe("3.5");
    expect(itn("the twenty first of may")).toBe("the 21st of may");
    expect(itn("the third time")).toBe("the 3rd time");
  });
  it("leaves pronoun one and interjection oh alone", () => {
    expect(itn("no one called oh well")).toBe("no one called oh well");
    expect(itn("this one and two")).toBe("this one and 2");
  });
  it("reports which words each token covers", () => {
    expect(inverseNormalize("call five five five now".split(" "))).toEqual([
      { text: "call", from: 0, to: 1 },
      { text: "555", from: 1, to: 4 },
      { text: "now", from: 4, to: 5 },
    ]);
  });
  it("tells which words may still extend a number", () => {
    expect(mayContinueNumber("hundred")).toBe(true);
    expect(mayContinueNumber("and")).toBe(true);
    expect(mayContinueNumber("please")).toBe(false);
  });
});
