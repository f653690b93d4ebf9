// E8 POST /v1/images/edits on the local service over real HTTP: the project's client (multipart
// file upload or Base64), raw HTTP for what the client refuses to send. Results are decoded with
// sharp and compared with the input pixel by pixel.
import { readFileSync } from "node:fs";
import { pino } from "pino";
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { BadRequestError } from "../../src/api/errors.ts";
import type { ImageEditParams } from "../../src/api/images.ts";
import type { ErrorBody, ImageResult } from "../../src/api/types/index.ts";
import { decode, gradientPng, means, type Pixels, wordBoxes } from "../service/helpers/images.ts";
import { media } from "../service/helpers/media.ts";
import { KEY, useService } from "../service/helpers/service.ts";
import { clientFor } from "../service/speech/helpers.ts";

const logLines: string[] = [];
const logger = pino({ level: "info" }, { write: (s: string) => void logLines.push(s) });
const t = useService({ logger, images: { blocklist: ["forbidden"] } });
const client = () => clientFor(t.url, KEY);
const PATH = "/v1/images/edits";
const W = 300;
const H = 200;

async function edit(prompt: string, extra: Partial<ImageEditParams> = {}) {
  const res = await client().images.edit({
    model: "svc-image-edit-2",
    image: await gradientPng(W, H),
    prompt,
    response_format: "b64_json",
    ...extra,
  });
  expect(res.data[0]!.finish_reason).toBe("success");
  return { res, png: Buffer.from(res.data[0]!.b64_json!, "base64") };
}

const pixel = (p: Pixels, x: number, y: number) => [
  ...p.data.subarray((y * p.width + x) * p.channels, (y * p.width + x) * p.channels + 3),
];

/** Posts a raw multipart form (for what the client does not send). */
async function postForm(
  fields: Record<string, string | Blob>,
): Promise<{ status: number; body: ErrorBody & ImageResult }> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  const res = await fetch(`${t.url}${PATH}`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}` },
    body: form,
  });
  return { status: res.status, body: (await res.json()) as ErrorBody & ImageResult };
}

const pngBlob = async (w = W, h = H) =>
  new Blob([new Uint8Array(await gradientPng(w, h))], { type: "image/png" });

describe("E8 operations", () => {
  it("grayscale keeps the input's size, whatever size says", async () => {
    const { png } = await edit("make it grayscale please", { size: "1024x1024" });
    const out = await decode(png);
    expect([out.format, out.width, out.height]).toEqual(["png", W, H]);
    for (const [x, y] of [
      [0, 0],
      [150, 100],
      [299, 199],
    ] as const) {
      const [r, g, b] = pixel(out, x, y);
      expect(r).toBe(g);
      expect(g).toBe(b);
    }
    // Luma is kept: the black corner stays dark, the bottom-right corner (red and green high) bright.
    expect(pixel(out, 0, 0)[0]!).toBeLessThan(30);
    expect(pixel(out, 299, 199)[0]!).toBeGreaterThan(150);
  });

  it("invert, flip and mirror move pixels as they should", async () => {
    const input = await decode(await gradientPng(W, H));
    const inv = await decode((await edit("invert the colours")).png);
    for (const [x, y] of [
      [10, 20],
      [250, 150],
    ] as const) {
      expect(pixel(inv, x, y)).toEqual(pixel(input, x, y).map((v) => 255 - v));
    }
    const flip = await decode((await edit("flip it")).png);
    expect(pixel(flip, 10, 0)).toEqual(pixel(input, 10, H - 1));
    const mirror = await decode((await edit("mirror the picture")).png);
    expect(pixel(mirror, 0, 30)).toEqual(pixel(input, W - 1, 30));
    const both = await decode((await edit("flip horizontally, then upside down")).png);
    expect(pixel(both, 0, 0)).toEqual(pixel(input, W - 1, H - 1));
  });

  it("rotate keeps the input's size (180° exactly, 90° fitted into it)", async () => {
    const input = await decode(await gradientPng(W, H));
    const r180 = await decode((await edit("rotate 180 degrees")).png);
    expect([r180.width, r180.height]).toEqual([W, H]);
    expect(pixel(r180, 0, 0)).toEqual(pixel(input, W - 1, H - 1));
    const r90 = await decode((await edit("rotate by 90")).png);
    expect([r90.width, r90.height]).toEqual([W, H]);
  });

  it("blur, brighten and darken change what they should", async () => {
    const input = await decode(await gradientPng(W, H));
    const stdev = async (png: Buffer) => (await sharp(png).stats()).channels[2]!.stdev;
    expect(await stdev((await edit("blur 6")).png)).toBeLessThan(
      (await stdev(await gradientPng(W, H))) * 0.8,
    );
    const lum = (p: Pixels) =>
      means(p)
        .slice(0, 3)
        .reduce((a, b) => a + b, 0);
    expect(lum(await decode((await edit("brighten")).png))).toBeGreaterThan(lum(input) * 1.15);
    expect(lum(await decode((await edit("darker")).png))).toBeLessThan(lum(input) * 0.8);
  });

  it("applies operations in the prompt's order and says which in the log", async () => {
    logLines.length = 0;
    await edit("first sepia, then pixelate, then rotate 180 and finally sharpen");
    const line = logLines
      .map((l) => JSON.parse(l) as { msg: string; applied?: string[] })
      .find((l) => l.applied);
    expect(line!.applied).toEqual(["sepia", "pixelate 16 px", "rotate 180°", "sharpen"]);
    expect(line!.msg).toMatch(/image edit by the placeholder engine: sepia, pixelate/);
    logLines.length = 0;
    const { png } = await edit("make it look like a watercolour painting");
    const unchanged = logLines.map((l) => JSON.parse(l) as { msg: string }).find((l) => /edit/.test(l.msg));
    expect(unchanged!.msg).toMatch(/no operation named in the prompt, image unchanged/);
    expect(Buffer.compare((await decode(png)).data, (await decode(await gradientPng(W, H))).data)).toBe(0);
  });

  it("negative_prompt removes operations above cfg_scale 1.0 only", async () => {
    const input = await decode(await gradientPng(W, H));
    const at1 = await decode((await edit("grayscale and invert", { negative_prompt: "invert" })).png);
    const at3 = await decode(
      (await edit("grayscale and invert", { negative_prompt: "invert", cfg_scale: 3 })).png,
    );
    // Bottom-right is bright in the input: inverted it is dark, only grayscaled it stays bright.
    expect(pixel(at1, W - 1, H - 1)[0]!).toBeLessThan(100);
    expect(pixel(at3, W - 1, H - 1)[0]!).toBeGreaterThan(150);
    expect(pixel(input, W - 1, H - 1)[0]!).toBe(255);
  });

  it("text_mode writes the prompt's quoted text", async () => {
    const on = await decode(
      (await edit('add the words "SPRING SALE" in the corner', { text_mode: true })).png,
    );
    const off = await decode((await edit('add the words "SPRING SALE" in the corner')).png);
    expect(wordBoxes(on, off)).toHaveLength(2);
  });

  it("takes the image as a file, as Base64, as a data URL, or in a JSON body: the same result", async () => {
    const bytes = await gradientPng(W, H);
    const file = (await edit("invert", { seed: 1 })).png;
    const b64 = (await edit("invert", { seed: 1, image: bytes.toString("base64") })).png;
    const dataUrl = (
      await edit("invert", { seed: 1, image: `data:image/png;base64,${bytes.toString("base64")}` })
    ).png;
    const res = await t.json<ImageResult>(PATH, {
      model: "svc-image-edit-2",
      prompt: "invert",
      image: bytes.toString("base64"),
      response_format: "b64_json",
      seed: 1,
    });
    expect(res.status).toBe(200);
    for (const other of [b64, dataUrl, Buffer.from(res.body.data[0]!.b64_json!, "base64")]) {
      expect(Buffer.compare(file, other)).toBe(0);
    }
  });

  it("reads jpeg and webp input and answers a png of the same size", async () => {
    const jpeg = await gradientPng(640, 480, "jpeg");
    const out = await decode(
      (await edit("grayscale", { image: new Uint8Array(jpeg), filename: "photo.jpg" })).png,
    );
    expect([out.format, out.width, out.height]).toEqual(["png", 640, 480]);
    const webp = await sharp(await gradientPng(120, 90))
      .webp()
      .toBuffer();
    const w = await decode((await edit("flip", { image: new Uint8Array(webp), filename: "a.webp" })).png);
    expect([w.width, w.height]).toEqual([120, 90]);
  });

  it("returns a URL by default, and the seed given or drawn", async () => {
    const res = await client().images.edit({
      model: "svc-image-edit-2",
      image: await gradientPng(W, H),
      prompt: "invert",
      seed: 77,
    });
    expect(res.data[0]).toMatchObject({ seed: 77, finish_reason: "success" });
    const img = await fetch(res.data[0]!.url!, { headers: { authorization: `Bearer ${KEY}` } });
    expect((await decode(new Uint8Array(await img.arrayBuffer()))).width).toBe(W);
    const drawn = await client().images.edit({
      model: "svc-image-edit-2",
      image: await gradientPng(W, H),
      prompt: "invert",
    });
    expect(drawn.data[0]!.seed).toBeGreaterThanOrEqual(0);
  });

  it("a blocklisted prompt is content_filtered", async () => {
    const res = await client().images.edit({
      model: "svc-image-edit-2",
      image: await gradientPng(W, H),
      prompt: "make it forbidden",
      seed: 3,
    });
    expect(res.data).toEqual([{ seed: 3, finish_reason: "content_filtered" }]);
  });
});

describe("E8 input and validation", () => {
  it("refuses an image over 4096x4096, naming the limit", async () => {
    const wide = await sharp({ create: { width: 4097, height: 8, channels: 3, background: "#888" } })
      .png()
      .toBuffer();
    // The client checks a file's size itself; sent as Base64 the check is the server's.
    const err = await client()
      .images.edit({ model: "svc-image-edit-2", image: wide.toString("base64"), prompt: "invert" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect((err as BadRequestError).param).toBe("image");
    expect((err as Error).message).toContain("at most 4096x4096 pixels (got 4097x8)");
    const tall = await sharp({ create: { width: 8, height: 4100, channels: 3, background: "#888" } })
      .png()
      .toBuffer();
    const raw = await postForm({
      model: "svc-image-edit-2",
      prompt: "invert",
      image: new Blob([new Uint8Array(tall)]),
    });
    expect([raw.status, raw.body.error.param]).toEqual([400, "image"]);
    expect(raw.body.error.message).toContain("4096x4096");
    const edge = await sharp({ create: { width: 4096, height: 4, channels: 3, background: "#888" } })
      .png()
      .toBuffer();
    const ok = await edit("invert", { image: new Uint8Array(edge) });
    expect((await decode(ok.png)).width).toBe(4096);
  });

  it("refuses a missing image, two images, bytes that are no image, an animated gif", async () => {
    const fields = { model: "svc-image-edit-2", prompt: "invert" };
    const cases: Array<[Record<string, string | Blob>, RegExp]> = [
      [{ ...fields }, /image is required/],
      [{ ...fields, image: new Blob([new TextEncoder().encode("not an image at all")]) }, /not an image/],
      [{ ...fields, image: "%%%not-base64%%%" }, /neither an image file part nor valid Base64/],
      [
        {
          ...fields,
          image: new Blob([new Uint8Array(readFileSync(media.animatedGif()))]),
        },
        /one still image/,
      ],
    ];
    for (const [form, message] of cases) {
      const { status, body } = await postForm(form);
      expect([Object.keys(form), status, body.error?.param]).toEqual([Object.keys(form), 400, "image"]);
      expect(body.error.message).toMatch(message);
    }
    const two = new FormData();
    two.append("model", "svc-image-edit-2");
    two.append("prompt", "invert");
    two.append("image", await pngBlob(), "a.png");
    two.append("image", await pngBlob(), "b.png");
    const res = await fetch(`${t.url}${PATH}`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}` },
      body: two,
    });
    const body = (await res.json()) as ErrorBody;
    expect([res.status, body.error.param]).toEqual([400, "image"]);
    expect(body.error.message).toMatch(/one image only/);
  });

  it("validates the form fields as E7 does, naming the parameter", async () => {
    const image = await pngBlob();
    const base = { model: "svc-image-edit-2", prompt: "invert", image };
    const cases: Array<[Record<string, string>, string]> = [
      [{ model: "svc-image-1" }, "model"],
      [{ prompt: "" }, "prompt"],
      [{ prompt: "p".repeat(513) }, "prompt"],
      [{ negative_prompt: "n".repeat(513) }, "negative_prompt"],
      [{ seed: "-1" }, "seed"],
      [{ seed: "2147483648" }, "seed"],
      [{ seed: "abc" }, "seed"],
      [{ steps: "0" }, "steps"],
      [{ steps: "51" }, "steps"],
      [{ steps: "2.5" }, "steps"],
      [{ cfg_scale: "0.5" }, "cfg_scale"],
      [{ cfg_scale: "10.5" }, "cfg_scale"],
      [{ cfg_scale: "high" }, "cfg_scale"],
      [{ response_format: "png" }, "response_format"],
      [{ text_mode: "yes" }, "text_mode"],
    ];
    for (const [change, param] of cases) {
      const { status, body } = await postForm({ ...base, ...change });
      expect([JSON.stringify(change), status, body.error.param]).toEqual([
        JSON.stringify(change),
        400,
        param,
      ]);
    }
    const { status } = await postForm({
      ...base,
      seed: "2147483647",
      steps: "50",
      cfg_scale: "10.0",
      text_mode: "false",
      size: "whatever",
      response_format: "b64_json",
    });
    expect(status).toBe(200);
  });
});
