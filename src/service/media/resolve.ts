// Turns the media parts of a chat request into bytes the service has looked at: data URLs are
// decoded, svcfile:// references resolved in the caller's own account, http(s) URLs fetched; then
// the content is identified by sniffing and perceived (image size, video/audio duration). Problems
// are request errors before any stream starts: 400 for references that cannot be followed, 422 for
// content that is not what the part claims or cannot be decoded.
import { randomBytes } from "node:crypto";
import { mkdirSync, statSync } from "node:fs";
import { open, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { FILE_REF_SCHEME, LIMITS } from "../../api/types/index.ts";
import { badParam, tooLarge, unusable } from "../errors.ts";
import type { GenRequest, MediaKind, MediaPart } from "../generation/request.ts";
import { mediaParts } from "../generation/request.ts";
import type { FileStore } from "../store/files.ts";
import { openDownload } from "./download.ts";
import { gifFrameCount } from "./gif-frames.ts";
import { type ImageInfo, imageInfo } from "./image-info.ts";
import { probeDuration } from "./probe.ts";
import { SNIFF_BYTES, type Sniffed, sniff } from "./sniff.ts";

export interface ResolvedMedia {
  kind: MediaKind;
  format: string;
  mime: string;
  size: number;
  /** The bytes, for images and audio (and inline video). */
  bytes?: Buffer;
  /** A file holding the bytes (stored files, video). */
  path?: string;
  image?: ImageInfo;
  durationS?: number;
}

const FORMATS: Readonly<Record<MediaKind, readonly string[]>> = {
  image: ["png", "jpeg", "webp", "gif"],
  video: ["mp4", "mov", "mkv"],
  audio: ["mp3", "wav"],
};
const ALLOWED: Readonly<Record<MediaKind, string>> = {
  image: "jpg/jpeg, png, webp or static gif",
  video: "MP4 (QuickTime .mov and Matroska .mkv also accepted)",
  audio: "mp3 or wav",
};

export class MediaResolver {
  private readonly files: FileStore;
  private readonly tmp: string;

  constructor(files: FileStore, dataDir: string) {
    this.files = files;
    this.tmp = join(dataDir, "tmp", "media");
    mkdirSync(this.tmp, { recursive: true });
  }

  /** Resolves every media part of `req` in place; returns a cleanup for temp files. */
  async resolveAll(req: GenRequest, account: string): Promise<() => Promise<void>> {
    const temps: string[] = [];
    const cleanup = async () => {
      await Promise.all(temps.map((t) => rm(t, { force: true })));
    };
    try {
      for (const part of mediaParts(req)) part.resolved = await this.resolve(part, account, temps);
    } catch (err) {
      await cleanup();
      throw err;
    }
    return cleanup;
  }

  private async resolve(part: MediaPart, account: string, temps: string[]): Promise<ResolvedMedia> {
    const { bytes, path } = await this.load(part, account, temps);
    const head = bytes ?? (await readHead(path!));
    const sniffed = sniff(head);
    const size = bytes ? bytes.length : statSync(path!).size;
    if (!sniffed || !FORMATS[part.type].includes(sniffed.format)) {
      const seen = sniffed ? `${sniffed.format} ${sniffed.kind}` : "not a recognized format";
      throw unusable(
        part.param,
        `expected ${part.type} content (${ALLOWED[part.type]}); the data is ${seen}`,
      );
    }
    const media: ResolvedMedia = { kind: part.type, format: sniffed.format, mime: sniffed.mime, size };
    if (bytes) media.bytes = bytes;
    if (path) media.path = path;
    if (part.type === "image") await this.perceiveImage(part, media, head, sniffed, bytes ?? path!);
    else await this.perceiveTimed(part, media, temps);
    return media;
  }

  private async perceiveImage(
    part: MediaPart,
    media: ResolvedMedia,
    head: Buffer,
    sniffed: Sniffed,
    source: Buffer | string,
  ): Promise<void> {
    const info = imageInfo(head, sniffed);
    if (!info) throw unusable(part.param, `the ${sniffed.format} image header cannot be decoded`);
    if (sniffed.format === "gif") {
      const frames = await gifFrameCount(source).catch(() => 0);
      if (frames === 0) throw unusable(part.param, "the GIF image cannot be decoded");
      if (frames > 1) throw unusable(part.param, "animated GIFs are not accepted; send a static GIF");
    }
    media.image = info;
  }

  private async perceiveTimed(part: MediaPart, media: ResolvedMedia, temps: string[]): Promise<void> {
    let path = media.path;
    if (!path) {
      path = join(this.tmp, `${randomBytes(8).toString("hex")}.${media.format}`);
      temps.push(path);
      await writeFile(path, media.bytes!);
      if (part.type === "video") media.path = path;
    }
    try {
      media.durationS = await probeDuration(path);
    } catch (err) {
      throw unusable(
        part.param,
        `the ${media.format} ${part.type} cannot be decoded: ${(err as Error).message}`,
      );
    }
  }

  private async load(
    part: MediaPart,
    account: string,
    temps: string[],
  ): Promise<{ bytes?: Buffer; path?: string }> {
    const url = part.url;
    const max = LIMITS.videoMaxBytes;
    if (url.startsWith(FILE_REF_SCHEME)) {
      const id = url.slice(FILE_REF_SCHEME.length);
      const file = this.files.get(account, id);
      if (!file) {
        throw badParam(
          part.param,
          `no stored file ${JSON.stringify(id)} in this account (upload it with POST /v1/files)`,
          "file_not_found",
        );
      }
      const path = this.files.pathOf(file);
      if (part.type === "video") return { path };
      return { bytes: await readFile(path) };
    }
    if (url.startsWith("data:")) {
      const m = /^data:([\w.+-]+\/[\w.+-]+)?((?:;[\w-]+=[^;,]*)*);base64,/i.exec(url.slice(0, 256));
      if (!m) throw badParam(part.param, "data URL must have the form data:<type>/<format>;base64,<data>");
      const declared = (m[1] ?? "").split("/")[0]!.toLowerCase();
      if (declared && declared !== part.type && !(part.type === "video" && declared === "application")) {
        throw badParam(part.param, `data URL type ${m[1]} is not ${part.type}/…`);
      }
      return { bytes: decodeBase64(url.slice(m[0].length), part.param, max) };
    }
    if (/^https?:\/\//i.test(url)) {
      const download = await openDownload(url, { param: part.param, maxBytes: max });
      const chunks: Buffer[] = [];
      let total = 0;
      for await (const chunk of download.body) {
        total += chunk.length;
        if (total > max) {
          download.abort();
          throw tooLarge(`${part.param}: the resource exceeds ${max} bytes`, part.param);
        }
        chunks.push(Buffer.from(chunk));
      }
      const bytes = Buffer.concat(chunks);
      if (part.type !== "video") return { bytes };
      const path = join(this.tmp, `${randomBytes(8).toString("hex")}.video`);
      temps.push(path);
      await writeFile(path, bytes);
      return { path };
    }
    // input_audio in the OpenAI shape carries bare Base64 plus a `format`.
    if (part.type === "audio" && /^[A-Za-z0-9+/=\s]+$/.test(url.slice(0, 1024))) {
      return { bytes: decodeBase64(url, part.param, max) };
    }
    const allowed =
      part.type === "audio"
        ? "a Base64 data URL (data:audio/<mp3|wav>;base64,…)"
        : "an http(s) URL, a Base64 data URL or svcfile://<file_id>";
    throw badParam(part.param, `must be ${allowed}`);
  }
}

function decodeBase64(text: string, param: string, max: number): Buffer {
  if (text.length > Math.ceil((max * 4) / 3) + 4)
    throw tooLarge(`${param}: the data exceeds ${max} bytes`, param);
  const clean = text.replace(/\s+/g, "");
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean) && !/^[A-Za-z0-9_-]*={0,2}$/.test(clean)) {
    throw badParam(param, "the Base64 data is malformed");
  }
  const bytes = Buffer.from(clean, "base64");
  if (bytes.length === 0) throw badParam(param, "the data is empty");
  return bytes;
}

async function readHead(path: string): Promise<Buffer> {
  const fh = await open(path, "r");
  try {
    const buf = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await fh.read(buf, 0, SNIFF_BYTES, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}
