import { describe, expect, it } from "vitest";
import { openInstructionAt, stripInstructions } from "../../../src/service/speech/instructions.ts";
import { stripMarkdown } from "../../../src/service/speech/markdown.ts";
import { applyPronunciation, parsePronunciationMap } from "../../../src/service/speech/pronunciation.ts";
import { SentenceSegmenter } from "../../../src/service/speech/segmenter.ts";

describe("() instructions", () => {
  it("removes complete groups, nested and full-width ones too", () => {
    expect(stripInstructions("(cheerfully) Hello there (pause) friend")).toBe(" Hello there friend");
    expect(stripInstructions("A (x (y) z) B")).toBe("A B");
    expect(stripInstructions("你好（开心地）朋友")).toBe("你好 朋友");
  });
  it("finds an instruction still open", () => {
    expect(openInstructionAt("Hello (whisper")).toBe(6);
    expect(openInstructionAt("Hello (whisper) now")).toBe(-1);
  });
});

describe("pronunciation_map", () => {
  it("validates the shape", () => {
    expect(parsePronunciationMap(undefined)).toEqual([]);
    expect(parsePronunciationMap({ tone: ["SQL/sequel"] })).toEqual([
      { source: "SQL", replacement: "sequel" },
    ]);
    expect(parsePronunciationMap({ tone: "SQL/sequel" })).toMatch(/array/);
    expect(parsePronunciationMap({ tone: ["nosl"] })).toMatch(/form/);
    expect(parsePronunciationMap({ tone: ["/x"] })).toMatch(/form/);
    expect(parsePronunciationMap([1])).toMatch(/object/);
  });
  it("replaces whole words, longest source first; CJK anywhere", () => {
    const rules = parsePronunciationMap({
      tone: ["SQL/sequel", "New York/the big apple", "New York City/NYC", "重庆/chong2qing4"],
    });
    if (typeof rules === "string") throw new Error(rules);
    expect(applyPronunciation("My SQL db, not MySQL, in New York City and New York.", rules)).toBe(
      "My sequel db, not MySQL, in NYC and the big apple.",
    );
    expect(applyPronunciation("欢迎来到重庆", rules)).toBe("欢迎来到chong2qing4");
  });
});

describe("markdown filter", () => {
  it("speaks the text, not the syntax", () => {
    const md = [
      "# Your order",
      "",
      "**Status:** _shipped_ on `2024-05-01`.",
      "- See [tracking](https://x.example/t) ![box](b.png)",
      "1. Call us",
      "> quoted ~~old~~ text",
      "---",
      "| a | b |",
      "|---|---|",
      "| 1 | 2 |",
    ].join("\n");
    const out = stripMarkdown(md);
    expect(out).not.toMatch(/[*_`#>[\]|~]/);
    expect(out).toContain("Your order");
    expect(out).toContain("Status: shipped on 2024-05-01.");
    expect(out).toContain("See tracking box");
    expect(out).toContain("Call us");
    expect(out).toContain("quoted old text");
    expect(out).toContain("1, 2");
  });
  it("drops stray markers of a half pair in a fragment", () => {
    expect(stripMarkdown("**Important")).toBe("Important");
    expect(stripMarkdown("notice** now")).toBe("notice now");
  });
});

describe("sentence segmentation", () => {
  const feed = (mode: "default" | "sentence", pieces: string[]) => {
    const s = new SentenceSegmenter(mode);
    const got: Array<[number, string]> = [];
    pieces.forEach((p, i) => {
      for (const x of s.push(p)) got.push([i, x]);
    });
    return { got, rest: s.flush() };
  };

  it("default mode cuts as soon as token-by-token text forms a sentence", () => {
    const tokens = [
      "Hello",
      ",",
      " how",
      " can",
      " I",
      " help",
      "?",
      " Your",
      " balance",
      " is",
      " $",
      "3",
      ".",
      "50",
      ".",
    ];
    const { got, rest } = feed("default", tokens);
    // "50." may still become "50.5": held until more text or a flush
    expect(got).toEqual([[6, "Hello, how can I help?"]]);
    expect(rest).toBe("Your balance is $3.50.");
    expect(feed("default", ["It", " costs", " 3", ".", "50", " dollars", ".", " Bye"]).got).toEqual([
      [6, "It costs 3.50 dollars."],
    ]);
  });

  it("does not cut after abbreviations, initials or inside an open instruction", () => {
    expect(feed("default", ["Dr.", " Smith", " will", " call", "."]).got).toEqual([
      [4, "Dr. Smith will call."],
    ]);
    expect(feed("default", ["J. R. Smith", " is", " here."]).got).toEqual([[2, "J. R. Smith is here."]]);
    expect(feed("default", ["Fine (sigh.", " ok)", " thanks."]).got).toEqual([
      [2, "Fine (sigh. ok) thanks."],
    ]);
  });

  it("cuts CJK sentences at once and keeps closing quotes", () => {
    expect(feed("default", ["你好。", "欢迎"]).got).toEqual([[0, "你好。"]]);
    expect(feed("sentence", ['He said "stop!" Then left.']).got).toEqual([
      [0, 'He said "stop!"'],
      [0, "Then left."],
    ]);
  });

  it("default mode cuts long clause runs, sentence mode waits for punctuation", () => {
    const long = `${"word ".repeat(22)}and then, ${"more ".repeat(10)}`;
    const d = feed("default", [long]);
    expect(d.got.length).toBe(1);
    expect(d.got[0]![1].endsWith(",")).toBe(true);
    const s = feed("sentence", [long]);
    expect(s.got).toEqual([]);
    expect(s.rest).toBe(long.trim());
  });

  it("flush releases the unfinished rest", () => {
    const { got, rest } = feed("default", ["One. Two", " three"]);
    expect(got).toEqual([[0, "One."]]);
    expect(rest).toBe("Two three");
  });
});
