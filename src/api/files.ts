// E9 files: upload (bytes, a local path, or a remote URL), list, retrieve, delete, content.
import { openAsBlob } from "node:fs";
import { stat } from "node:fs/promises";
import { basename } from "node:path";
import { type ClientContext, v1 } from "./context.ts";
import type { CallOptions } from "./http.ts";
import type { FileDeleted, FileList, FileObject } from "./types/files.ts";
import { FILE_UPLOAD_FILE_FIELD } from "./types/files.ts";
import { PATHS } from "./types/paths.ts";
import { validateFileSize } from "./validate.ts";

export type FileSource =
  | { data: Uint8Array | Blob; filename: string; mimeType?: string }
  | { path: string; filename?: string; mimeType?: string }
  | { url: string };

export class FilesApi {
  private readonly ctx: ClientContext;

  constructor(ctx: ClientContext) {
    this.ctx = ctx;
  }

  /** Upload for `storage`; reference the result in chat parts as `svcfile://<id>`. */
  async upload(src: FileSource, opts: CallOptions = {}): Promise<FileObject> {
    const form = new FormData();
    form.append("purpose", "storage");
    if ("url" in src) {
      form.append("url", src.url);
    } else if ("path" in src) {
      const size = (await stat(src.path)).size;
      validateFileSize("file", size);
      // openAsBlob streams from disk instead of reading the whole file into memory.
      const blob = await openAsBlob(src.path, src.mimeType ? { type: src.mimeType } : undefined);
      form.append(FILE_UPLOAD_FILE_FIELD, blob, src.filename ?? basename(src.path));
    } else {
      const blob =
        src.data instanceof Blob
          ? src.data
          : new Blob(
              [src.data as Uint8Array<ArrayBuffer>],
              src.mimeType ? { type: src.mimeType } : undefined,
            );
      validateFileSize("file", blob.size);
      form.append(FILE_UPLOAD_FILE_FIELD, blob, src.filename);
    }
    const ex = await this.ctx.http.send({ method: "POST", path: v1(PATHS.files), form }, opts);
    return ex.json<FileObject>();
  }

  async list(opts: CallOptions = {}): Promise<FileList> {
    const ex = await this.ctx.http.send({ method: "GET", path: v1(PATHS.files) }, opts);
    return ex.json<FileList>();
  }

  async retrieve(fileId: string, opts: CallOptions = {}): Promise<FileObject> {
    const ex = await this.ctx.http.send(
      { method: "GET", path: `${v1(PATHS.files)}/${encodeURIComponent(fileId)}` },
      opts,
    );
    return ex.json<FileObject>();
  }

  async delete(fileId: string, opts: CallOptions = {}): Promise<FileDeleted> {
    const ex = await this.ctx.http.send(
      { method: "DELETE", path: `${v1(PATHS.files)}/${encodeURIComponent(fileId)}` },
      opts,
    );
    return ex.json<FileDeleted>();
  }

  /** Parsed content as plain text (files with purpose `file-extract` only). */
  async content(fileId: string, opts: CallOptions = {}): Promise<string> {
    const ex = await this.ctx.http.send(
      {
        method: "GET",
        path: `${v1(PATHS.files)}/${encodeURIComponent(fileId)}/content`,
        accept: "text/plain, */*",
      },
      opts,
    );
    return ex.text();
  }
}
