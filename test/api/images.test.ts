import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { BadRequestError, SvcValidationError } from "../../src/api/errors.ts";
import type { ImageResult } from "../../src/api/types/index.ts";
import { type Recorded, sendJson, useServerAndClient } from "./helpers/server.ts";

const t = useServerAndClient();

const result: ImageResult = {
  created: 1,
  data: [{ seed: 42, finish_reason: "success", b64_json: "iVBORw0KGgo=" }],
};

/** Parse the recorded multipart body with the platform's own form parser. */
function form(r: Recorded): Promise<FormData> {
  return new Request("http://x", {
    method: "POST",
    headers: { "content-type": String(r.headers["content-type"]) },
    body: r.body,
  }).formData();
}

function png(w: number, h: number): Uint8Array {
  return execFileSync("ffmpeg", [
    "-v",
    "error",
    "-f",
    "lavfi",
    "-i",
    `color=blue:s=${w}x${h}`,
    "-frames:v",
    "1",
    "-f",
    "image2pipe",
    "-c:v",
    "png",
    "-",
  ]);
}

describe("E7/E8 images", () => {
  it("generates from a prompt with every documented field", async () => {
    t.srv.on("POST /v1/images/generations", (_r, res) => sendJson(res, 200, result));
    const req = {
      model: "svc-image-edit-2",
      prompt: "a lighthouse at dusk",
      size: "768x1360" as const,
      n: 1,
      response_format: "b64_json" as const,
      seed: 2147483647,
      steps: 50,
      cfg_scale: 10,
      negative_prompt: "fog",
      text_mode: true,
    };
    expect(await t.c.images.generate(req)).toEqual(result);
    expect(t.srv.requests[0]!.json).toEqual(req);
  });

  it("checks prompt length, steps, cfg_scale, seed, size and n before sending", async () => {
    const base = { model: "svc-image-edit-2", prompt: "x" };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ prompt: "p".repeat(513) }, "prompt: must be at most 512 characters"],
      [{ negative_prompt: "n".repeat(513) }, "negative_prompt: must be at most 512 characters"],
      [{ steps: 0 }, "steps: must be an integer from 1 to 50"],
      [{ steps: 8.5 }, "steps: must be an integer from 1 to 50"],
      [{ cfg_scale: 10.5 }, "cfg_scale: must be a number from 1 to 10"],
      [{ seed: -1 }, "seed: must be an integer from 0 to 2147483647"],
      [{ size: "1024x768" }, "size: must be one of 1024x1024, 768x1360, 896x1184, 1360x768, 1184x896"],
      [{ n: 2 }, "n: must be an integer from 1 to 1"],
    ];
    for (const [extra, msg] of cases) {
      const err = await t.c.images.generate({ ...base, ...extra } as never).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SvcValidationError);
      expect((err as Error).message).toContain(msg);
    }
    expect(t.srv.requests).toHaveLength(0);
  });

  it("edits: sends the image as a multipart file with the fields as form values", async () => {
    t.srv.on("POST /v1/images/edits", (_r, res) => sendJson(res, 200, result));
    const img = png(64, 32);
    await t.c.images.edit({
      model: "svc-image-edit-2",
      image: img,
      filename: "in.png",
      prompt: "make it red",
      steps: 4,
      cfg_scale: 2.5,
      text_mode: false,
      response_format: "url",
    });
    const f = await form(t.srv.requests[0]!);
    const file = f.get("image") as File;
    expect(file.name).toBe("in.png");
    expect(file.type).toBe("image/png");
    expect(Buffer.from(await file.arrayBuffer()).equals(Buffer.from(img))).toBe(true);
    expect(Object.fromEntries([...f.entries()].filter(([k]) => k !== "image"))).toEqual({
      model: "svc-image-edit-2",
      prompt: "make it red",
      steps: "4",
      cfg_scale: "2.5",
      text_mode: "false",
      response_format: "url",
    });
  });

  it("edits: a Base64 image goes as a form field", async () => {
    t.srv.on("POST /v1/images/edits", (_r, res) => sendJson(res, 200, result));
    const b64 = `data:image/png;base64,${Buffer.from(png(8, 8)).toString("base64")}`;
    await t.c.images.edit({ model: "svc-image-edit-2", image: b64, prompt: "p" });
    expect((await form(t.srv.requests[0]!)).get("image")).toBe(b64);
  });

  it("edits: refuses an image over 4096x4096 before uploading", async () => {
    const err = await t.c.images
      .edit({ model: "svc-image-edit-2", image: png(4100, 4), prompt: "p" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SvcValidationError);
    expect((err as Error).message).toBe('image: must be at most 4096x4096 pixels (got "4100x4")');
    expect(t.srv.requests).toHaveLength(0);
  });

  it("passes a server rejection through as a typed error", async () => {
    t.srv.on("POST /v1/images/edits", (_r, res) =>
      sendJson(res, 400, {
        error: { message: "prompt rejected", type: "invalid_request_error", param: "prompt" },
      }),
    );
    const err = await t.c.images
      .edit({ model: "svc-image-edit-2", image: png(8, 8), prompt: "p" })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err).toMatchObject({ param: "prompt" });
  });
});
