// Media parts in chat requests: images, video and audio reach the engine decoded and perceived
// (size and format, duration by ffprobe, audio through the injected transcriber), from data URLs,
// svcfile:// references in the caller's account, and http URLs; bad media is a clear 4xx.
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type {
  ChatCompletion,
  FileObject,
  MessagesMessage,
  ResponseObject,
} from "../../src/api/types/index.ts";
import type { AudioClip } from "../../src/service/index.ts";
import { dataUrl, media } from "./helpers/media.ts";
import { KEY, useService } from "./helpers/service.ts";

const heard: AudioClip[] = [];
const t = useService({
  apiKeys: [KEY, "other-key"],
  // The seam the ASR engine plugs into; this test transcriber records what it was given.
  transcribe: async (clip) => {
    heard.push(clip);
    return "what are your opening hours";
  },
});
const PATH = "/v1/chat/completions";

const ask = async (parts: unknown[], extra: Record<string, unknown> = {}) => {
  const { status, body } = await t.json<ChatCompletion>(PATH, {
    model: "svc-3.7-flash",
    messages: [{ role: "user", content: parts }],
    ...extra,
  });
  expect(status, JSON.stringify(body)).toBe(200);
  return body;
};
const image = (url: string, detail?: string) => ({
  type: "image_url",
  image_url: detail ? { url, detail } : { url },
});

async function upload(path: string, name: string, key = KEY): Promise<FileObject> {
  const form = new FormData();
  form.set("purpose", "storage");
  form.set("file", new Blob([readFileSync(path)]), name);
  const res = await fetch(`${t.url}/v1/files`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}` },
    body: form,
  });
  return (await res.json()) as FileObject;
}

let origin: Server;
let originUrl = "";
beforeAll(async () => {
  origin = createServer((req, res) => {
    if (req.url === "/pic.webp") res.end(readFileSync(media.webp()));
    else res.writeHead(404).end();
  });
  await new Promise<void>((r) => origin.listen(0, "127.0.0.1", r));
  originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => origin.close(() => r())));

describe("images", () => {
  it("sees the size and format of data-URL images, several in one message", async () => {
    const r = await ask([image(dataUrl(media.png(), "image/png")), image(dataUrl(media.gif(), "image/gif"))]);
    expect(r.choices[0]!.message.content).toBe(
      "I can see a 64 by 48 pixel PNG image. I can see a 40 by 30 pixel GIF image.",
    );
  });

  it("fetches http images and resolves svcfile:// in the caller's account only", async () => {
    expect((await ask([image(`${originUrl}/pic.webp`)])).choices[0]!.message.content).toBe(
      "I can see a 100 by 50 pixel WEBP image.",
    );
    const f = await upload(media.jpeg(), "photo.jpg");
    expect((await ask([image(`svcfile://${f.id}`)])).choices[0]!.message.content).toBe(
      "I can see a 320 by 200 pixel JPEG image.",
    );
    const theirs = await upload(media.jpeg(), "theirs.jpg", "other-key");
    const { status, error } = await t.error(PATH, {
      model: "svc-3.7-flash",
      messages: [{ role: "user", content: [image(`svcfile://${theirs.id}`)] }],
    });
    expect(status).toBe(400);
    expect(error.param).toBe("messages[0].content[0].image_url.url");
    expect(error.message).toMatch(/no stored file/);
  });

  it("refuses media it cannot use with 4xx naming the part", async () => {
    const cases: [unknown, number, RegExp][] = [
      [
        image(`data:image/png;base64,${Buffer.from("plain text, not a picture").toString("base64")}`),
        422,
        /not a recognized format/,
      ],
      [image(dataUrl(media.animatedGif(), "image/gif")), 422, /animated/],
      [image(dataUrl(media.wav(), "image/png")), 422, /wav audio/],
      [image("data:image/png,not-base64"), 400, /data URL/],
      [image(`${originUrl}/missing.png`), 400, /HTTP 404/],
      [image("ftp://example.com/a.png"), 400, /an http\(s\) URL/],
    ];
    for (const [part, status, message] of cases) {
      const r = await t.error(PATH, {
        model: "svc-3.7-flash",
        messages: [{ role: "user", content: [part] }],
      });
      expect(r.status, message.source).toBe(status);
      expect(r.error.param).toBe("messages[0].content[0].image_url.url");
      expect(r.error.message).toMatch(message);
    }
  });

  it("counts a fixed 400 tokens at low detail and per 28-pixel patch at high detail", async () => {
    const big = await (async () => {
      const { execFileSync } = await import("node:child_process");
      const out = `${media.png()}.big.png`;
      execFileSync("ffmpeg", [
        "-loglevel",
        "error",
        "-y",
        "-f",
        "lavfi",
        "-i",
        "color=gray:s=1600x1200",
        "-frames:v",
        "1",
        out,
      ]);
      return dataUrl(out, "image/png");
    })();
    const low = await ask([image(big, "low")]);
    const high = await ask([image(big, "high")]);
    expect(high.usage.prompt_tokens - low.usage.prompt_tokens).toBe(58 * 43 - 400);
  });

  it("reaches the engine from messages (E2) and responses (E3) too", async () => {
    const m = await t.json<MessagesMessage>("/v1/messages", {
      model: "svc-3.7-flash",
      max_tokens: 50,
      messages: [
        {
          role: "user",
          content: [
            {
              type: "image",
              source: {
                type: "base64",
                media_type: "image/png",
                data: readFileSync(media.png()).toString("base64"),
              },
            },
          ],
        },
      ],
    });
    expect(m.body.content).toEqual([{ type: "text", text: "I can see a 64 by 48 pixel PNG image." }]);
    const r = await t.json<ResponseObject>("/v1/responses", {
      model: "svc-3.7-flash",
      input: [
        { role: "user", content: [{ type: "input_image", image_url: dataUrl(media.webp(), "image/webp") }] },
      ],
    });
    expect((r.body.output[0] as { content: { text: string }[] }).content[0]!.text).toBe(
      "I can see a 100 by 50 pixel WEBP image.",
    );
  });
});

describe("video and audio", () => {
  it("measures video duration with ffprobe, inline and stored", async () => {
    const inline = await ask([{ type: "video_url", video_url: { url: dataUrl(media.mp4(), "video/mp4") } }]);
    expect(inline.choices[0]!.message.content).toBe("I see a MP4 video of about 2.5 seconds.");
    const f = await upload(media.mp4(), "clip.mp4");
    const stored = await ask([{ type: "video_url", video_url: { url: `svcfile://${f.id}` } }]);
    expect(stored.choices[0]!.message.content).toBe("I see a MP4 video of about 2.5 seconds.");
    expect(stored.usage.prompt_tokens).toBe(inline.usage.prompt_tokens);
    const notVideo = await t.error(PATH, {
      model: "svc-3.7-flash",
      messages: [
        {
          role: "user",
          content: [{ type: "video_url", video_url: { url: dataUrl(media.png(), "video/mp4") } }],
        },
      ],
    });
    expect(notVideo.status).toBe(422);
  });

  it("hands audio to the transcriber and answers what was said", async () => {
    heard.length = 0;
    const r = await ask([{ type: "input_audio", input_audio: { data: dataUrl(media.wav(), "audio/wav") } }]);
    expect(r.choices[0]!.message.content).toBe(
      "We're open Monday to Friday, nine to six, and Saturday ten to four.",
    );
    expect(heard).toHaveLength(1);
    expect(heard[0]!.format).toBe("wav");
    expect(heard[0]!.bytes).toEqual(readFileSync(media.wav()));
    const mp3 = await ask([
      {
        type: "input_audio",
        input_audio: { data: readFileSync(media.mp3()).toString("base64"), format: "mp3" },
      },
    ]);
    expect(mp3.choices[0]!.finish_reason).toBe("stop");
    expect(heard[1]!.format).toBe("mp3");
  });
});

describe("audio without a transcriber", () => {
  const bare = useService();
  it("says how much audio it got", async () => {
    const { body } = await bare.json<ChatCompletion>(PATH, {
      model: "svc-3.7-flash",
      messages: [
        {
          role: "user",
          content: [{ type: "input_audio", input_audio: { data: dataUrl(media.wav(), "audio/wav") } }],
        },
      ],
    });
    expect(body.choices[0]!.message.content).toBe(
      "I got 1 seconds of audio, but I can't listen to recordings right now.",
    );
  });
});
