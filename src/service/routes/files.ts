// E9 files: upload (multipart `file`, or `url`; the file wins when both are given), list,
// retrieve, delete, content. Bytes stream to disk through the file store; only `storage` uploads.
import { createReadStream } from "node:fs";
import multipart from "@fastify/multipart";
import type { FastifyRequest } from "fastify";
import type { FileDeleted, FileList } from "../../api/types/index.ts";
import { FILE_UPLOAD_PURPOSES } from "../../api/types/index.ts";
import type { ServiceRoute } from "../context.ts";
import { ApiError, badParam, missingParam, notFound } from "../errors.ts";
import { openDownload } from "../media/download.ts";
import { type StagedUpload, toFileObject } from "../store/files.ts";

interface UploadFields {
  purpose?: string;
  url?: string;
}

export const filesRoute: ServiceRoute = async (app, { ctx }) => {
  const store = ctx.files;
  await app.register(multipart, {
    // One byte over the cap marks the file as too large; busboy then skips the rest of the body.
    limits: { fileSize: store.maxBytes + 1, files: 1, fields: 16, fieldSize: 64 * 1024, parts: 32 },
    throwFileSizeLimit: false,
  });

  app.post("/v1/files", async (request, reply) => {
    const account = request.account;
    store.assertRoom(account);
    let staged: StagedUpload | undefined;
    let filename = "upload";
    let fields: UploadFields;
    try {
      if (request.isMultipart()) {
        const got = await readMultipart(
          request,
          (source) => store.stage(source),
          (s) => store.discard(s),
        );
        fields = got.fields;
        staged = got.staged;
        filename = got.filename;
      } else {
        fields = (request.body ?? {}) as UploadFields;
        if (typeof fields !== "object" || Array.isArray(fields)) {
          throw new ApiError(400, "send multipart/form-data with fields purpose and file (or url)", {
            code: "invalid_content_type",
          });
        }
      }
      const purpose = fields.purpose;
      if (purpose === undefined || purpose === "") missingOrThrow("purpose");
      if (!(FILE_UPLOAD_PURPOSES as readonly string[]).includes(purpose as string)) {
        throw badParam(
          "purpose",
          `must be one of: ${FILE_UPLOAD_PURPOSES.join(", ")} (got ${JSON.stringify(purpose)})`,
        );
      }
      const fromUrl = !staged;
      if (!staged) {
        const url = fields.url;
        if (url === undefined || url === "")
          throw missingParam("file", "send a file part named 'file' or a 'url' field");
        if (typeof url !== "string") throw badParam("url", "must be a string");
        const download = await openDownload(url, { param: "url", maxBytes: store.maxBytes });
        staged = await store.stage(download.body, { onOverflow: download.abort, param: "url" });
        filename = cleanName(download.filename) || "download";
      }
      const file = await store.commit(account, staged, {
        filename,
        purpose: purpose as string,
        param: fromUrl ? "url" : "file",
      });
      staged = undefined;
      ctx.log.debug({ account, id: file.id, bytes: file.bytes, format: file.format }, "file stored");
      return reply.send(toFileObject(file));
    } finally {
      if (staged) await store.discard(staged);
    }
  });

  app.get(
    "/v1/files",
    async (request): Promise<FileList> => ({
      object: "list",
      data: store.list(request.account).map(toFileObject),
    }),
  );

  app.get<{ Params: { file_id: string } }>("/v1/files/:file_id", async (request) =>
    toFileObject(found(request.account, request.params.file_id)),
  );

  app.delete<{ Params: { file_id: string } }>("/v1/files/:file_id", async (request): Promise<FileDeleted> => {
    const id = request.params.file_id;
    if (!(await store.delete(request.account, id))) throw noSuchFile(id);
    return { id, object: "file", deleted: true };
  });

  app.get<{ Params: { file_id: string } }>("/v1/files/:file_id/content", async (request, reply) => {
    const file = found(request.account, request.params.file_id);
    if (file.purpose !== "file-extract") {
      throw new ApiError(
        400,
        `file content is only available for files with purpose file-extract; ${file.id} has purpose ${file.purpose}`,
        { param: "file_id", code: "invalid_purpose" },
      );
    }
    return reply.type("text/plain; charset=utf-8").send(createReadStream(store.pathOf(file)));
  });

  function found(account: string, id: string) {
    const file = store.get(account, id);
    if (!file) throw noSuchFile(id);
    return file;
  }
};

function noSuchFile(id: string): ApiError {
  return notFound(`no such file: ${JSON.stringify(id)}`, "file_id", "file_not_found");
}

function missingOrThrow(param: string): never {
  throw missingParam(param, `must be one of: ${FILE_UPLOAD_PURPOSES.join(", ")}`);
}

interface MultipartUpload {
  fields: UploadFields;
  staged?: StagedUpload;
  filename: string;
}

/**
 * Reads every part: the first `file` part is staged to disk, the fields collected. Parts after a
 * failure are drained, so the client gets the error response instead of a reset connection.
 */
async function readMultipart(
  request: FastifyRequest,
  stage: (source: AsyncIterable<Uint8Array>) => Promise<StagedUpload>,
  discard: (staged: StagedUpload) => Promise<void>,
): Promise<MultipartUpload> {
  const fields: Record<string, string> = {};
  let failure: unknown;
  let staged: StagedUpload | undefined;
  let filename = "upload";
  try {
    for await (const part of request.parts()) {
      if (part.type === "file") {
        if (failure !== undefined || staged || part.fieldname !== "file") {
          part.file.resume();
          continue;
        }
        try {
          staged = await stage(part.file);
          filename = cleanName(part.filename) || "upload";
        } catch (err) {
          failure = err;
          part.file.resume();
        }
      } else if (typeof part.value === "string") {
        fields[part.fieldname] = part.value;
      }
    }
  } catch (err) {
    failure ??= err;
  }
  if (failure !== undefined) {
    if (staged) await discard(staged);
    throw failure;
  }
  return staged ? { fields, staged, filename } : { fields, filename };
}

/** A display name: the last path segment, without control characters, at most 255 characters. */
export function cleanName(name: string | undefined): string {
  if (!name) return "";
  const last = name.split(/[\\/]/).pop() ?? "";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  return last.replace(/[\u0000-\u001f\u007f]/g, "").slice(0, 255);
}
