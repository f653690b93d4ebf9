import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SvcClient } from "../../src/api/client.ts";
import { NotFoundError } from "../../src/api/errors.ts";
import type { FileObject } from "../../src/api/types/index.ts";
import { type Recorded, sendJson, startServer, type TestServer } from "./helpers/server.ts";

let srv: TestServer;
let c: SvcClient;
let dir: string;
beforeEach(async () => {
  srv = await startServer();
  c = new SvcClient({ baseURL: srv.url, apiKey: "k", retryBaseMs: 1 });
  dir = mkdtempSync(join(tmpdir(), "files-"));
});
afterEach(async () => {
  await srv.close();
  rmSync(dir, { recursive: true, force: true });
});

function form(r: Recorded): Promise<FormData> {
  return new Request("http://x", {
    method: "POST",
    headers: { "content-type": String(r.headers["content-type"]) },
    body: r.body,
  }).formData();
}

/** A store that keeps what it receives, answering with File resources. */
function fileStore(): void {
  const files = new Map<string, FileObject & { content: Buffer }>();
  let n = 0;
  srv.on("POST /v1/files", async (r, res) => {
    const f = await form(r);
    const file = f.get("file");
    const url = f.get("url");
    const content =
      file instanceof Blob ? Buffer.from(await file.arrayBuffer()) : Buffer.from(`fetched ${url}`);
    const name = file instanceof File ? file.name : String(url).split("/").pop()!;
    const obj = {
      id: `file-${++n}`,
      object: "file" as const,
      bytes: content.length,
      created_at: 1,
      filename: name,
      purpose: String(f.get("purpose")),
      status: "processed",
    };
    files.set(obj.id, { ...obj, content });
    sendJson(res, 200, obj);
  });
  srv.on("GET /v1/files", (_r, res) =>
    sendJson(res, 200, { object: "list", data: [...files.values()].map(({ content: _, ...o }) => o) }),
  );
  for (const id of ["file-1", "file-2", "file-3"]) {
    srv.on(`GET /v1/files/${id}`, (_r, res) => {
      const f = files.get(id);
      if (!f) return sendJson(res, 404, { error: { message: "no such file", type: "not_found_error" } });
      const { content: _, ...o } = f;
      sendJson(res, 200, o);
    });
    srv.on(`DELETE /v1/files/${id}`, (_r, res) =>
      sendJson(res, 200, { id, object: "file", deleted: files.delete(id) }),
    );
    srv.on(`GET /v1/files/${id}/content`, (_r, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end(files.get(id)?.content.toString() ?? "");
    });
  }
}

describe("E9 files", () => {
  it("uploads from bytes, a path and a URL; lists, retrieves, reads and deletes", async () => {
    fileStore();
    const a = await c.files.upload({
      data: new TextEncoder().encode("hello bytes"),
      filename: "a.wav",
      mimeType: "audio/wav",
    });
    expect(a).toMatchObject({ id: "file-1", bytes: 11, filename: "a.wav", purpose: "storage" });
    const p = join(dir, "clip.mp3");
    writeFileSync(p, Buffer.alloc(3000, 7));
    const b = await c.files.upload({ path: p });
    expect(b).toMatchObject({ id: "file-2", bytes: 3000, filename: "clip.mp3" });
    const u = await c.files.upload({ url: "https://example.com/pic.png" });
    expect(u).toMatchObject({ id: "file-3", filename: "pic.png" });
    const uploadForm = await form(srv.requests[2]!);
    expect([...uploadForm.keys()]).toEqual(["purpose", "url"]);

    expect((await c.files.list()).data.map((f) => f.id)).toEqual(["file-1", "file-2", "file-3"]);
    expect(await c.files.retrieve("file-2")).toEqual(b);
    expect(await c.files.content("file-1")).toBe("hello bytes");
    expect(await c.files.delete("file-1")).toEqual({ id: "file-1", object: "file", deleted: true });
    await expect(c.files.retrieve("file-1")).rejects.toBeInstanceOf(NotFoundError);
  });
});
