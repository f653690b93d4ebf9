// E7 POST /v1/images/generations on the local service over real HTTP: the project's client for
// what it sends, raw HTTP for the values it refuses to send. Every image is decoded with sharp.
import { describe, expect, it } from "vitest";
import { BadRequestError } from "../../src/api/errors.ts";
import type { ImageGenerationRequest, ImageResult } from "../../src/api/types/index.ts";
import { IMAGE_SIZES } from "../../src/api/types/index.ts";
import { decode, means, wordBoxes } from "../service/helpers/images.ts";
import { KEY, useService } from "../service/helpers/service.ts";
import { clientFor } from "../service/speech/helpers.ts";

const OTHER = "other-account-key";
let clock = Date.parse("2025-06-01T12:00:00Z");
const t = useService({
  apiKeys: [KEY, OTHER],
  images: { blocklist: ["forbidden fruit", "gore"], now: () => clock },
});
const client = () => clientFor(t.url, KEY);
const PATH = "/v1/images/generations";
const base = { model: "svc-image-edit-2", prompt: "a lighthouse on a cliff at dusk" } as const;

async function b64(req: Partial<ImageGenerationRequest> = {}) {
  const res = await client().images.generate({ ...base, response_format: "b64_json", ...req });
  expect(res.data).toHaveLength(1);
  expect(res.data[0]!.finish_reason).toBe("success");
  expect(res.data[0]!.url).toBeUndefined();
  return { entry: res.data[0]!, png: Buffer.from(res.data[0]!.b64_json!, "base64"), created: res.created };
}

const get = (url: string, key = KEY) => fetch(url, { headers: { authorization: `Bearer ${key}` } });

describe("E7 results", () => {
  it("defaults to a URL of a 1024x1024 PNG, with a random seed returned", async () => {
    const res: ImageResult = await client().images.generate(base);
    expect(res.created).toBe(Math.floor(clock / 1000));
    const [entry] = res.data;
    expect(entry!.finish_reason).toBe("success");
    expect(entry!.b64_json).toBeUndefined();
    expect(Number.isInteger(entry!.seed)).toBe(true);
    expect(entry!.seed).toBeGreaterThanOrEqual(0);
    expect(entry!.seed).toBeLessThanOrEqual(2147483647);
    expect(entry!.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1\/images\/files\/[A-Za-z0-9_-]{24}\.png$/);
    const file = await get(entry!.url!);
    expect(file.status).toBe(200);
    expect(file.headers.get("content-type")).toBe("image/png");
    const img = await decode(new Uint8Array(await file.arrayBuffer()));
    expect([img.format, img.width, img.height]).toEqual(["png", 1024, 1024]);
    // The seed it chose gives the same picture when asked for.
    const again = await b64({ seed: entry!.seed });
    expect(Buffer.compare(again.png, Buffer.from(await (await get(entry!.url!)).arrayBuffer()))).toBe(0);
  });

  it("gives every size as height x width", async () => {
    for (const size of IMAGE_SIZES) {
      const img = await decode((await b64({ size, seed: 1, steps: 1 })).png);
      const [h, w] = size.split("x").map(Number);
      expect([size, img.width, img.height]).toEqual([size, w, h]);
    }
  });

  it("is deterministic: the same inputs give the same bytes, another seed or prompt another picture", async () => {
    const a = await b64({ seed: 12345 });
    const b = await b64({ seed: 12345 });
    expect(a.entry.seed).toBe(12345);
    expect(Buffer.compare(a.png, b.png)).toBe(0);
    expect(Buffer.compare(a.png, (await b64({ seed: 12346 })).png)).not.toBe(0);
    expect(Buffer.compare(a.png, (await b64({ seed: 12345, prompt: `${base.prompt}!` })).png)).not.toBe(0);
    expect(Buffer.compare(a.png, (await b64({ seed: 12345, steps: 20 })).png)).not.toBe(0);
    expect(Buffer.compare(a.png, (await b64({ seed: 12345, cfg_scale: 4 })).png)).not.toBe(0);
  });

  it("seeds differ between requests that give none", async () => {
    const seeds = new Set<number>();
    for (let i = 0; i < 3; i++) seeds.add((await b64({ steps: 1 })).entry.seed);
    expect(seeds.size).toBe(3);
  });

  it("ignores negative_prompt at cfg_scale 1.0 and follows it above", async () => {
    const red = { prompt: "red apples on a red tablecloth", seed: 7 };
    const plain1 = await b64(red);
    const neg1 = await b64({ ...red, negative_prompt: "red" });
    expect(Buffer.compare(plain1.png, neg1.png)).toBe(0);
    const plain5 = await decode((await b64({ ...red, cfg_scale: 5 })).png);
    const neg5 = await decode((await b64({ ...red, cfg_scale: 5, negative_prompt: "red" })).png);
    const redness = (p: typeof plain5) => means(p)[0]! - means(p)[2]!;
    expect(redness(neg5)).toBeLessThan(redness(plain5) - 20);
  });

  it("takes colours from the prompt's words", async () => {
    const ocean = means(await decode((await b64({ prompt: "deep blue ocean", seed: 3, cfg_scale: 6 })).png));
    const fire = means(
      await decode((await b64({ prompt: "orange fire and red sunset", seed: 3, cfg_scale: 6 })).png),
    );
    expect(ocean[2]!).toBeGreaterThan(ocean[0]! + 40);
    expect(fire[0]!).toBeGreaterThan(fire[2]! + 40);
  });

  it("text_mode renders the prompt's words on the picture", async () => {
    const prompt = "poster saying OPEN EVERY SUNDAY";
    const on = await decode((await b64({ prompt, seed: 9, text_mode: true })).png);
    const off = await decode((await b64({ prompt, seed: 9 })).png);
    const words = wordBoxes(on, off);
    expect(words).toHaveLength(5);
    // "poster" < "saying" ≈ … and "SUNDAY" (6 capitals) wider than "OPEN" (4).
    expect(words[4]!.width).toBeGreaterThan(words[2]!.width * 1.3);
    // Without text_mode nothing is written: the picture is the scene alone.
    expect(wordBoxes(off, off)).toHaveLength(0);
  });

  it("text_mode sets a long prompt over several lines, every word of it", async () => {
    const prompt =
      "grand opening of the corner bakery this saturday with fresh bread warm croissants free coffee for the first fifty guests and music all afternoon long";
    const on = await decode((await b64({ prompt, size: "768x1360", seed: 2, text_mode: true })).png);
    const off = await decode((await b64({ prompt, size: "768x1360", seed: 2 })).png);
    const words = wordBoxes(on, off);
    expect(words).toHaveLength(prompt.split(" ").length);
    expect(new Set(words.map((w) => w.line)).size).toBeGreaterThan(1);
  });

  it("a blocklisted prompt is answered content_filtered, without an image", async () => {
    const res = await client().images.generate({ ...base, prompt: "A Forbidden  Fruit in a bowl", seed: 5 });
    expect(res.data).toEqual([{ seed: 5, finish_reason: "content_filtered" }]);
    const b = await client().images.generate({ ...base, prompt: "GORE", response_format: "b64_json" });
    expect(b.data[0]!.finish_reason).toBe("content_filtered");
    expect(b.data[0]!.b64_json).toBeUndefined();
    // Whole words only, and the negative prompt is not filtered.
    for (const prompt of ["a forbidden door", "gorey details", "fruit"]) {
      expect((await b64({ prompt, steps: 1 })).entry.finish_reason).toBe("success");
    }
    expect((await b64({ negative_prompt: "gore", steps: 1 })).entry.finish_reason).toBe("success");
  });

  it("URLs serve for 2 hours, to their account only, then 404", async () => {
    const { data } = await client().images.generate({ ...base, steps: 1 });
    const url = data[0]!.url!;
    expect((await get(url, OTHER)).status).toBe(404);
    clock += 2 * 3600 * 1000 - 1000;
    expect((await get(url)).status).toBe(200);
    clock += 1000;
    const gone = await get(url);
    expect(gone.status).toBe(404);
    expect(((await gone.json()) as { error: { message: string } }).error.message).toMatch(
      /valid for 2 hours/,
    );
    expect((await get(url.replace(/[^/]+\.png$/, "AAAAAAAAAAAAAAAAAAAAAAAA.png"))).status).toBe(404);
  });
});

describe("E7 validation", () => {
  it("accepts every limit's edge values", async () => {
    const edges: Array<Partial<ImageGenerationRequest>> = [
      { seed: 0 },
      { seed: 2147483647 },
      { steps: 1 },
      { steps: 50 },
      { cfg_scale: 1.0 },
      { cfg_scale: 10.0 },
      { prompt: "p".repeat(512), negative_prompt: "n".repeat(512), cfg_scale: 2.5 },
      { n: 1, text_mode: false },
    ];
    for (const e of edges) expect((await b64({ steps: 1, ...e })).entry.finish_reason).toBe("success");
  });

  it("refuses out-of-range and mistyped values with a 400 naming the parameter", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ model: undefined }, "model"],
      [{ model: "svc-image-1" }, "model"],
      [{ prompt: undefined }, "prompt"],
      [{ prompt: "" }, "prompt"],
      [{ prompt: "p".repeat(513) }, "prompt"],
      [{ prompt: 42 }, "prompt"],
      [{ negative_prompt: "n".repeat(513) }, "negative_prompt"],
      [{ size: "1024x768" }, "size"],
      [{ size: "1360X768" }, "size"],
      [{ n: 2 }, "n"],
      [{ n: 0 }, "n"],
      [{ response_format: "png" }, "response_format"],
      [{ seed: -1 }, "seed"],
      [{ seed: 2147483648 }, "seed"],
      [{ seed: 1.5 }, "seed"],
      [{ seed: "5" }, "seed"],
      [{ steps: 0 }, "steps"],
      [{ steps: 51 }, "steps"],
      [{ steps: 8.5 }, "steps"],
      [{ cfg_scale: 0.9 }, "cfg_scale"],
      [{ cfg_scale: 10.01 }, "cfg_scale"],
      [{ cfg_scale: "2" }, "cfg_scale"],
      [{ text_mode: "yes" }, "text_mode"],
    ];
    for (const [change, param] of cases) {
      const { status, error } = await t.error(PATH, { ...base, ...change });
      expect([JSON.stringify(change), status, error.param]).toEqual([JSON.stringify(change), 400, param]);
      expect(error.message.startsWith(param)).toBe(true);
    }
    const body = await t.error(PATH, "[1]");
    expect(body.status).toBe(400);
  });

  it("the client refuses the same values before sending", async () => {
    await expect(client().images.generate({ ...base, steps: 51 })).rejects.toThrow(/steps/);
    // And the server's 400 reaches the client as a BadRequestError.
    const err = await client()
      .images.generate({ ...base, model: "svc-image-9" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).param).toBe("model");
  });
});
