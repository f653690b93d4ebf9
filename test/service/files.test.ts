// E9 files against the running local service: formats by content, accounts kept apart, restart
// durability, the 128 MB cap in bounded memory, interrupted uploads, and ids that try path tricks.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ErrorBody, FileList, FileObject } from "../../src/api/types/index.ts";
import { type LocalService, startLocalService } from "../../src/service/index.ts";
import { until } from "../helpers/until.ts";
import { media } from "./helpers/media.ts";

const A = "key-account-a";
const B = "key-account-b";
let dir: string;
let svc: LocalService;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "svc-files-"));
  svc = await startLocalService({ dataDir: dir, apiKeys: [A, B] });
});
afterAll(async () => {
  await svc.close();
  rmSync(dir, { recursive: true, force: true });
});

const auth = (key: string) => ({ authorization: `Bearer ${key}` });

async function upload(key: string, path: string, name: string, extra: Record<string, string> = {}) {
  const form = new FormData();
  form.set("purpose", "storage");
  for (const [k, v] of Object.entries(extra)) form.set(k, v);
  form.set("file", new Blob([readFileSync(path)]), name);
  const res = await fetch(`${svc.url}/v1/files`, { method: "POST", headers: auth(key), body: form });
  return { status: res.status, body: (await res.json()) as FileObject & ErrorBody };
}

describe("upload, list, retrieve, delete", () => {
  it("stores a PNG and returns the File resource", async () => {
    const { status, body } = await upload(A, media.png(), "red.png");
    expect(status).toBe(200);
    expect(body).toMatchObject({
      object: "file",
      filename: "red.png",
      purpose: "storage",
      status: "processed",
    });
    expect(body.id).toMatch(/^file-[0-9a-f]{24}$/);
    expect(body.bytes).toBe(readFileSync(media.png()).length);
    expect(Math.abs(body.created_at - Date.now() / 1000)).toBeLessThan(60);

    const list = (await (await fetch(`${svc.url}/v1/files`, { headers: auth(A) })).json()) as FileList;
    expect(list.object).toBe("list");
    expect(list.data.map((f) => f.id)).toContain(body.id);
    const one = await (await fetch(`${svc.url}/v1/files/${body.id}`, { headers: auth(A) })).json();
    expect(one).toEqual(body);

    const content = await fetch(`${svc.url}/v1/files/${body.id}/content`, { headers: auth(A) });
    expect(content.status).toBe(400);
    expect(((await content.json()) as ErrorBody).error.message).toMatch(/file-extract/);

    const del = await fetch(`${svc.url}/v1/files/${body.id}`, { method: "DELETE", headers: auth(A) });
    expect(await del.json()).toEqual({ id: body.id, object: "file", deleted: true });
    expect((await fetch(`${svc.url}/v1/files/${body.id}`, { headers: auth(A) })).status).toBe(404);
    expect(
      (await fetch(`${svc.url}/v1/files/${body.id}`, { method: "DELETE", headers: auth(A) })).status,
    ).toBe(404);
  });

  it("accepts each storage format, judged by content and not by name", async () => {
    const cases: [string, string][] = [
      [media.jpeg(), "photo.bin"],
      [media.webp(), "a.webp"],
      [media.gif(), "still.gif"],
      [media.mp4(), "clip.mp4"],
      [media.wav(), "tone.mp3"],
      [media.mp3(), "tone.mp3"],
    ];
    for (const [path, name] of cases) {
      const { status, body } = await upload(A, path, name);
      expect(status, `${name}: ${JSON.stringify(body)}`).toBe(200);
      const stored = svc.ctx.files.get(svc.ctx.accounts.lookup(A)!, body.id)!;
      expect(readFileSync(svc.ctx.files.pathOf(stored))).toEqual(readFileSync(path));
    }
  });

  it("refuses other content whatever its name: text, animated GIF, QuickTime", async () => {
    const txt = join(dir, "notes.png");
    writeFileSync(txt, "hello, this is not an image\n");
    for (const [path, name, why] of [
      [txt, "notes.png", /unrecognized/],
      [media.animatedGif(), "anim.gif", /animated/],
      [media.mov(), "clip.mp4", /mov/],
    ] as const) {
      const { status, body } = await upload(A, path, name);
      expect(status).toBe(400);
      expect(body.error.param).toBe("file");
      expect(body.error.message).toMatch(why);
      expect(body.error.message).toMatch(/allowed: mp4/);
    }
  });

  it("validates purpose and requires a file or url", async () => {
    const noPurpose = new FormData();
    noPurpose.set("file", new Blob([readFileSync(media.png())]), "a.png");
    let res = await fetch(`${svc.url}/v1/files`, { method: "POST", headers: auth(A), body: noPurpose });
    expect(res.status).toBe(400);
    expect(((await res.json()) as ErrorBody).error.param).toBe("purpose");

    const extract = new FormData();
    extract.set("purpose", "file-extract");
    extract.set("file", new Blob([readFileSync(media.png())]), "a.png");
    res = await fetch(`${svc.url}/v1/files`, { method: "POST", headers: auth(A), body: extract });
    expect(res.status).toBe(400);
    expect(((await res.json()) as ErrorBody).error.message).toMatch(/storage/);

    const nothing = new FormData();
    nothing.set("purpose", "storage");
    res = await fetch(`${svc.url}/v1/files`, { method: "POST", headers: auth(A), body: nothing });
    expect(res.status).toBe(400);
    expect(((await res.json()) as ErrorBody).error.param).toBe("file");
    expect(readdirSync(join(dir, "tmp", "uploads"))).toEqual([]);
  });
});

describe("upload by url", () => {
  let origin: Server;
  let base: string;
  beforeAll(async () => {
    origin = createServer((req, res) => {
      if (req.url === "/media/tone.wav") res.end(readFileSync(media.wav()));
      else res.writeHead(404).end("no");
    });
    await new Promise<void>((r) => origin.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => origin.close(() => r())));

  it("fetches the url and stores its bytes, named after the path", async () => {
    const res = await fetch(`${svc.url}/v1/files`, {
      method: "POST",
      headers: { ...auth(A), "content-type": "application/json" },
      body: JSON.stringify({ purpose: "storage", url: `${base}/media/tone.wav` }),
    });
    const body = (await res.json()) as FileObject;
    expect(res.status).toBe(200);
    expect(body.filename).toBe("tone.wav");
    expect(body.bytes).toBe(readFileSync(media.wav()).length);
  });

  it("prefers the file when both file and url are given", async () => {
    const { status, body } = await upload(A, media.png(), "pic.png", { url: `${base}/media/tone.wav` });
    expect(status).toBe(200);
    expect(body.filename).toBe("pic.png");
    expect(body.bytes).toBe(readFileSync(media.png()).length);
  });

  it("reports an unreachable url as a parameter error", async () => {
    const form = new FormData();
    form.set("purpose", "storage");
    form.set("url", `${base}/missing.wav`);
    const res = await fetch(`${svc.url}/v1/files`, { method: "POST", headers: auth(A), body: form });
    expect(res.status).toBe(400);
    const err = ((await res.json()) as ErrorBody).error;
    expect(err.param).toBe("url");
    expect(err.message).toMatch(/HTTP 404/);
  });
});

describe("accounts and ids", () => {
  it("keeps one account's files out of another's reach", async () => {
    const { body } = await upload(A, media.png(), "mine.png");
    const listB = (await (await fetch(`${svc.url}/v1/files`, { headers: auth(B) })).json()) as FileList;
    expect(listB.data.map((f) => f.id)).not.toContain(body.id);
    expect((await fetch(`${svc.url}/v1/files/${body.id}`, { headers: auth(B) })).status).toBe(404);
    expect(
      (await fetch(`${svc.url}/v1/files/${body.id}`, { method: "DELETE", headers: auth(B) })).status,
    ).toBe(404);
    expect((await fetch(`${svc.url}/v1/files/${body.id}`, { headers: auth(A) })).status).toBe(200);
  });

  it("treats path tricks in ids as unknown ids", async () => {
    const tricks = [
      "..%2F..%2Fservice.sqlite",
      "..%2Fdev-api-key",
      "file-%2E%2E",
      "file-0123%00",
      encodeURIComponent(`../${svc.ctx.accounts.lookup(A)}/x`),
    ];
    for (const t of tricks) {
      for (const suffix of ["", "/content"]) {
        const res = await fetch(`${svc.url}/v1/files/${t}${suffix}`, { headers: auth(A) });
        expect(res.status, t).toBe(404);
        expect(((await res.json()) as ErrorBody).error.type).toBe("not_found_error");
      }
    }
  });
});

describe("limits and interruptions", () => {
  it("refuses a 129 MB upload with 413, streaming it without holding it in memory", async () => {
    const boundary = "----svc-test-boundary";
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nstorage\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.mp4"\r\n` +
        "Content-Type: video/mp4\r\n\r\n",
    );
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
    const chunk = Buffer.alloc(1024 * 1024, 7);
    readFileSync(media.mp4()).copy(chunk);
    const total = 129;
    const heapBefore = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
    let peak = 0;
    const result = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(`${svc.url}/v1/files`, {
        method: "POST",
        headers: {
          ...auth(A),
          "content-type": `multipart/form-data; boundary=${boundary}`,
          "content-length": head.length + total * chunk.length + tail.length,
        },
      });
      req.on("response", (res) => {
        let body = "";
        res.on("data", (c: Buffer) => {
          body += c;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      let sent = 0;
      const pump = () => {
        while (sent < total) {
          sent++;
          const m = process.memoryUsage();
          peak = Math.max(peak, m.heapUsed + m.arrayBuffers);
          if (!req.write(chunk)) return void req.once("drain", pump);
        }
        req.end(tail);
      };
      req.write(head);
      pump();
    });
    expect(result.status).toBe(413);
    expect((JSON.parse(result.body) as ErrorBody).error.message).toMatch(/128 MB/);
    // Streaming still leaves each received chunk as garbage until V8 collects it, and V8 collects
    // off-heap (Buffer) garbage only once about 64 MB of it has built up: a streaming service
    // peaks at 64-75 MB here (a 64 MB bound failed now and then). Holding the body would add
    // all 129 MB on top of that garbage.
    expect(peak - heapBefore).toBeLessThan(100 * 1024 * 1024);
    expect(readdirSync(join(dir, "tmp", "uploads"))).toEqual([]);
  });

  it("leaves nothing behind when the client hangs up mid-upload", async () => {
    const before = ((await (await fetch(`${svc.url}/v1/files`, { headers: auth(B) })).json()) as FileList)
      .data.length;
    const boundary = "----svc-cut";
    const req = httpRequest(`${svc.url}/v1/files`, {
      method: "POST",
      headers: {
        ...auth(B),
        "content-type": `multipart/form-data; boundary=${boundary}`,
        "content-length": 10 * 1024 * 1024,
      },
    });
    req.on("error", () => {});
    req.write(
      `--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nstorage\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="cut.wav"\r\n\r\n`,
    );
    req.write(readFileSync(media.wav()));
    const uploads = () => readdirSync(join(dir, "tmp", "uploads"));
    await until(() => uploads().length === 1, "the upload's file on disk", 5_000);
    req.destroy();
    await until(() => uploads().length === 0, "the cut upload's file removed", 5_000);
    const after = ((await (await fetch(`${svc.url}/v1/files`, { headers: auth(B) })).json()) as FileList)
      .data;
    expect(after.length).toBe(before);
  });
});

describe("restart", () => {
  it("keeps every acknowledged file across a restart", async () => {
    const d = mkdtempSync(join(tmpdir(), "svc-restart-"));
    try {
      let s = await startLocalService({ dataDir: d, apiKeys: ["k"] });
      const form = new FormData();
      form.set("purpose", "storage");
      form.set("file", new Blob([readFileSync(media.jpeg())]), "kept.jpg");
      const made = (await (
        await fetch(`${s.url}/v1/files`, { method: "POST", headers: auth("k"), body: form })
      ).json()) as FileObject;
      await s.close();
      s = await startLocalService({ dataDir: d, apiKeys: ["k"] });
      const got = await fetch(`${s.url}/v1/files/${made.id}`, { headers: auth("k") });
      const stored = s.ctx.files.get(s.ctx.accounts.lookup("k")!, made.id)!;
      const bytes = readFileSync(s.ctx.files.pathOf(stored));
      await s.close();
      expect(await got.json()).toEqual(made);
      expect(bytes).toEqual(readFileSync(media.jpeg()));
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});
