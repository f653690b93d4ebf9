// Requests exactly as the official clients send them, for the endpoints they can reach: the openai
// Node SDK itself, and the openai Python SDK's shape reproduced byte for byte with fetch (it sends
// `Content-Type: application/json` and `Accept: application/json` on every request, body-less GET
// and DELETE included; multipart from httpx; arrays in queries as key[]=).
import { readFileSync } from "node:fs";
import OpenAI, { toFile } from "openai";
import { describe, expect, it } from "vitest";
import { parseWav } from "../../codecs/wav.ts";
import { readSse } from "../../src/api/sse.ts";
import { media } from "./helpers/media.ts";
import { KEY, useService } from "./helpers/service.ts";

const t = useService();
const openai = () => new OpenAI({ baseURL: `${t.url}/v1`, apiKey: KEY, maxRetries: 0 });

/** The headers openai-python puts on every request (its default_headers), plus auth. */
const PYTHON_HEADERS = {
  accept: "application/json",
  "content-type": "application/json",
  "user-agent": "OpenAI/Python 1.99.0",
  "x-stainless-lang": "python",
  "x-stainless-package-version": "1.99.0",
  "x-stainless-runtime": "CPython",
  "x-stainless-retry-count": "0",
  authorization: `Bearer ${KEY}`,
};

function python(
  method: string,
  path: string,
  init: { body?: string | Buffer; headers?: Record<string, string> } = {},
) {
  return fetch(`${t.url}${path}`, {
    method,
    headers: { ...PYTHON_HEADERS, ...init.headers },
    body: init.body,
  });
}

/** httpx's multipart: its own boundary, fields as parts, the file with filename and type. */
function httpxMultipart(fields: Record<string, string>, file: { name: string; type: string; bytes: Buffer }) {
  const boundary = "8f1d9c1e6a2b4e0f9d3c7b5a1e2f4c6d";
  const parts: Buffer[] = [];
  for (const [k, v] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`));
  }
  parts.push(
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${file.name}"\r\nContent-Type: ${file.type}\r\n\r\n`,
    ),
    file.bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  );
  return { body: Buffer.concat(parts), type: `multipart/form-data; boundary=${boundary}` };
}

describe("the openai Python SDK's request shapes", () => {
  it("files: upload (httpx multipart), list, retrieve and a body-less DELETE with Content-Type: application/json", async () => {
    const m = httpxMultipart(
      { purpose: "storage" },
      {
        name: "blue.jpg",
        type: "image/jpeg",
        bytes: readFileSync(media.jpeg()),
      },
    );
    // httpx replaces the default JSON content type with the multipart one when files are sent.
    const up = await python("POST", "/v1/files", { body: m.body, headers: { "content-type": m.type } });
    expect(up.status).toBe(200);
    const file = (await up.json()) as { id: string; filename: string };
    expect(file.filename).toBe("blue.jpg");
    const list = await python("GET", "/v1/files");
    expect(list.status).toBe(200);
    expect(((await list.json()) as { data: { id: string }[] }).data.map((f) => f.id)).toContain(file.id);
    expect((await python("GET", `/v1/files/${file.id}`)).status).toBe(200);
    // httpx sends no body and no Content-Length on a DELETE without content.
    const del = await python("DELETE", `/v1/files/${file.id}`);
    expect(del.status).toBe(200);
    expect(await del.json()).toEqual({ id: file.id, object: "file", deleted: true });
    // Twice: the second is a 404 for the file, not a 400 for the (empty) body.
    const again = await python("DELETE", `/v1/files/${file.id}`, { headers: { "content-length": "0" } });
    expect(again.status).toBe(404);
  });

  it("voices: GET with a query and the JSON content type", async () => {
    const r = await python("GET", "/v1/audio/voices?limit=2&order=asc");
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ object: "list", data: [] });
  });

  it("a POST with an empty body is still a 400 (those routes take a body)", async () => {
    const r = await python("POST", "/v1/audio/speech", { body: "" });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: { code: string } }).error.code).toBe("invalid_json");
  });

  it("speech (E4) and a chat stream read with Accept: application/json, as the SDK sends them", async () => {
    const speech = await python("POST", "/v1/audio/speech", {
      body: JSON.stringify({
        model: "svc-tts-2",
        input: "Hi.",
        voice: "en_female_aria",
        response_format: "wav",
      }),
    });
    expect(speech.status).toBe(200);
    expect(parseWav(new Uint8Array(await speech.arrayBuffer())).samples.length).toBeGreaterThan(0);
    const chat = await python("POST", "/v1/chat/completions", {
      body: JSON.stringify({
        model: "svc-3.5-flash",
        stream: true,
        messages: [{ role: "user", content: "hello" }],
      }),
    });
    expect(chat.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const data: string[] = [];
    for await (const ev of readSse(chat.body!)) data.push(ev.data);
    expect(data.at(-1)).toBe("[DONE]");
  });
});

describe("the openai Node SDK", () => {
  it("files: create (multipart), retrieve, list, delete", async () => {
    const client = openai();
    const f = await client.files.create({
      file: await toFile(readFileSync(media.jpeg()), "blue.jpg", { type: "image/jpeg" }),
      purpose: "storage" as "user_data",
    });
    expect((await client.files.retrieve(f.id)).id).toBe(f.id);
    const ids: string[] = [];
    for await (const x of client.files.list()) ids.push(x.id);
    expect(ids).toContain(f.id);
    expect(await client.files.delete(f.id)).toEqual({ id: f.id, object: "file", deleted: true });
  });

  it("audio.speech.create (E4) returns the audio", async () => {
    const r = await openai().audio.speech.create({
      model: "svc-tts-2",
      voice: "en_male_adam",
      input: "Good morning.",
      response_format: "wav",
    });
    const wav = parseWav(new Uint8Array(await r.arrayBuffer()));
    expect(wav.sampleRate).toBe(24000);
    expect(wav.samples.length).toBeGreaterThan(0);
  });

  it("images.edit (E8) with the image alone or as a list of one (sent as image[] parts)", async () => {
    const png = readFileSync(media.png());
    for (const image of [
      await toFile(png, "red.png", { type: "image/png" }),
      [await toFile(png, "red.png", { type: "image/png" })],
    ]) {
      const r = await openai().images.edit({
        model: "svc-image-edit-2",
        image,
        prompt: "make it grayscale",
        response_format: "b64_json",
      });
      expect(r.data![0]!.b64_json!.length).toBeGreaterThan(0);
    }
    const two = [
      await toFile(png, "a.png", { type: "image/png" }),
      await toFile(png, "b.png", { type: "image/png" }),
    ];
    const err = await openai()
      .images.edit({ model: "svc-image-edit-2", image: two, prompt: "make it grayscale" })
      .catch((e: Error) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).toMatch(/one image only/);
  });

  it("E10 through the client's generic get, with its query encoding", async () => {
    const r = await openai().get("/audio/voices", { query: { limit: 2, order: "desc" } });
    expect(r).toMatchObject({ object: "list", data: [] });
  });
});
