// What of a new stream goes beyond the words the caller already has.
import { describe, expect, it } from "vitest";
import { afterPrefix, joinText } from "../../../src/session/resilience/spoken-prefix.ts";

describe("afterPrefix", () => {
  it("skips what was said, whatever its case and spacing", () => {
    expect(afterPrefix("We open at nine,", "we  open\nat NINE, Monday to Friday.")).toEqual({
      kind: "rest",
      rest: " Monday to Friday.",
    });
    expect(afterPrefix("We open at nine, ", "  We open at nine,")).toEqual({ kind: "rest", rest: "" });
    expect(afterPrefix("", "Hello.")).toEqual({ kind: "rest", rest: "Hello." });
  });

  it("asks for more while the new text is within what was said", () => {
    expect(afterPrefix("We open at nine,", "We op")).toEqual({ kind: "more" });
  });

  it("says when the new text words it otherwise", () => {
    expect(afterPrefix("We open at nine,", "Our hours")).toEqual({ kind: "diverged" });
    expect(afterPrefix("We open at nine,", "We open at ten")).toEqual({ kind: "diverged" });
  });
});

describe("joinText", () => {
  it("puts a space between two words left unspaced, and only there", () => {
    expect(joinText("We open at nine,", "Monday")).toBe(" Monday");
    expect(joinText("We open at nine, ", "Monday")).toBe("Monday");
    expect(joinText("We open at nine", ", Monday")).toBe(", Monday");
  });
});
