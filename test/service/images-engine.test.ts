// Pieces of the placeholder image engine and its settings: which operations a prompt names and in
// what order, the blocklist's whole-word matching, the caption's text, and the blocklist reaching
// the service from the configuration (SVC_IMAGE_BLOCKLIST).
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.ts";
import { captionText } from "../../src/service/engines/image/caption.ts";
import { ContentFilter, DEFAULT_IMAGE_BLOCKLIST } from "../../src/service/engines/image/content-filter.ts";
import { operationsIn } from "../../src/service/engines/image/operations.ts";
import { serviceOptionsFromConfig } from "../../src/service/index.ts";

const labels = (prompt: string, exclude?: string) => operationsIn(prompt, exclude).map((o) => o.label);

describe("operations named in a prompt", () => {
  it("are found in the prompt's order, with their parameters", () => {
    expect(labels("Rotate it 45 degrees, then make it black and white and blur by 2.5")).toEqual([
      "rotate 45°",
      "grayscale",
      "blur σ=2.5",
    ]);
    expect(labels("flip horizontally")).toEqual(["flop (mirror left-right)"]);
    expect(labels("turn it upside down and brighten")).toEqual(["flip (upside down)", "brighten ×1.3"]);
    expect(labels("a sepia, pixelated, darker and more contrast version")).toEqual([
      "sepia",
      "pixelate 16 px",
      "darken ×0.7",
      "contrast ×1.4",
    ]);
  });

  it("clamp parameters to sane ranges and know nothing else", () => {
    expect(labels("blur 5000")).toEqual(["blur σ=100"]);
    expect(labels("rotate 720")).toEqual(["rotate 360°"]);
    expect(labels("paint it like Monet")).toEqual([]);
  });

  it("leave out what the exclusion text names", () => {
    expect(labels("grayscale, invert, blur", "no inverted colours")).toEqual(["grayscale", "blur σ=4"]);
  });
});

describe("content filter", () => {
  it("matches whole words and phrases in any case and spacing", () => {
    const f = new ContentFilter(["forbidden fruit", "gore"]);
    expect(f.match("A FORBIDDEN\n fruit!")).toBe("forbidden fruit");
    expect(f.match("gore.")).toBe("gore");
    expect(f.match("forbidden fruity")).toBeUndefined();
    expect(f.match("gorey")).toBeUndefined();
    expect(new ContentFilter([]).match("gore")).toBeUndefined();
    expect(new ContentFilter().match("gore")).toBe("gore");
    expect(DEFAULT_IMAGE_BLOCKLIST.length).toBeGreaterThan(0);
  });
});

describe("caption text", () => {
  it("is the quoted text when there is some, else the whole prompt", () => {
    expect(captionText('a sign that says "OPEN" and \u201cLATE\u201d')).toBe("OPEN LATE");
    expect(captionText("  grand   opening ")).toBe("grand opening");
  });
});

describe("configuration", () => {
  it("SVC_IMAGE_BLOCKLIST reaches the service options", () => {
    const config = loadConfig({ env: { SVC_IMAGE_BLOCKLIST: "foo, bar baz ,," } });
    expect(serviceOptionsFromConfig(config.local).images).toEqual({ blocklist: ["foo", "bar baz"] });
    expect(serviceOptionsFromConfig(loadConfig({ env: {} }).local).images).toBeUndefined();
  });
});
