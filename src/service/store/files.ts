// E9 file storage: metadata rows in SQLite, bytes in <dataDir>/files/<account>/<id>. Uploads are
// streamed to a temp file (never held whole in memory), identified by content sniffing, then
// fsynced and renamed into place before the row is written: an interrupted upload leaves nothing,
// an acknowledged one survives a restart. Every lookup is by (account, id), so one account never
// reaches another's files, and ids are checked against a strict pattern before they touch a path.
import { randomBytes } from "node:crypto";
import { mkdirSync, readdirSync, rmSync } from "node:fs";
import { mkdir, open, rename, rm, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "pino";
import type { FileObject } from "../../api/types/index.ts";
import { LIMITS } from "../../api/types/index.ts";
import { fsyncDir } from "../../core/durable-file.ts";
import { ApiError, badParam, tooLarge } from "../errors.ts";
import { gifFrameCount } from "../media/gif-frames.ts";
import { SNIFF_BYTES, type Sniffed, sniff } from "../media/sniff.ts";
import type { Database } from "./db.ts";

export const FILE_ID_PATTERN = /^file-[0-9a-f]{24}$/;
const ACCOUNT_PATTERN = /^acct_[0-9a-f]{24}$/;

/** Formats a `storage` upload may have (spec E9): video mp4; jpeg, png, webp, static gif; mp3, wav. */
export const STORAGE_FORMATS: ReadonlySet<string> = new Set([
  "mp4",
  "jpeg",
  "png",
  "webp",
  "gif",
  "mp3",
  "wav",
]);
const ALLOWED_TEXT = "mp4 video; jpg/jpeg, png, webp or static gif images; mp3 or wav audio";

export interface StoredFile {
  id: string;
  account: string;
  bytes: number;
  createdAt: number;
  filename: string;
  purpose: string;
  status: string;
  /** Sniffed format and MIME type. */
  format: string;
  mime: string;
  kind: string;
}

/** An upload written to a temp file, not yet committed. */
export interface StagedUpload {
  tmpPath: string;
  bytes: number;
  sniffed: Sniffed | undefined;
}

interface Row {
  id: string;
  account: string;
  bytes: number;
  created_at: number;
  filename: string;
  purpose: string;
  status: string;
  format: string;
  mime: string;
  kind: string;
}

export interface FileStoreOptions {
  maxBytes?: number;
  maxFilesPerAccount?: number;
}

export class FileStore {
  readonly maxBytes: number;
  readonly maxFiles: number;
  private readonly db: Database;
  private readonly root: string;
  private readonly tmp: string;
  private readonly log: Logger;

  constructor(db: Database, dataDir: string, log: Logger, opts: FileStoreOptions = {}) {
    this.db = db;
    this.log = log;
    this.root = join(dataDir, "files");
    this.tmp = join(dataDir, "tmp", "uploads");
    this.maxBytes = opts.maxBytes ?? LIMITS.fileMaxBytes;
    this.maxFiles = opts.maxFilesPerAccount ?? LIMITS.filesPerUser;
    db.exec(`CREATE TABLE IF NOT EXISTS files (
      id TEXT PRIMARY KEY, account TEXT NOT NULL, bytes INTEGER NOT NULL, created_at INTEGER NOT NULL,
      filename TEXT NOT NULL, purpose TEXT NOT NULL, status TEXT NOT NULL,
      format TEXT NOT NULL, mime TEXT NOT NULL, kind TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS files_account ON files (account, created_at);`);
    this.sweep();
  }

  /** Start-up repair: drops temp files of interrupted uploads, blobs without rows, rows without blobs. */
  private sweep(): void {
    rmSync(this.tmp, { recursive: true, force: true });
    mkdirSync(this.tmp, { recursive: true });
    mkdirSync(this.root, { recursive: true });
    const known = new Set(
      (this.db.prepare("SELECT account, id FROM files").all() as unknown as Row[]).map(
        (r) => `${r.account}/${r.id}`,
      ),
    );
    const onDisk = new Set<string>();
    for (const account of readdirSync(this.root)) {
      for (const id of readdirSync(join(this.root, account))) {
        const key = `${account}/${id}`;
        if (known.has(key)) onDisk.add(key);
        else rmSync(join(this.root, account, id), { force: true });
      }
    }
    for (const key of known) {
      if (onDisk.has(key)) continue;
      const [account, id] = key.split("/") as [string, string];
      this.log.warn({ account, id }, "file row without bytes on disk: removed");
      this.db.prepare("DELETE FROM files WHERE account = ? AND id = ?").run(account, id);
    }
  }

  count(account: string): number {
    const r = this.db.prepare("SELECT COUNT(*) AS n FROM files WHERE account = ?").get(account) as {
      n: number;
    };
    return r.n;
  }

  /** Throws the per-account limit error when the account is full (checked again at commit). */
  assertRoom(account: string): void {
    if (this.count(account) >= this.maxFiles) {
      throw new ApiError(
        400,
        `file limit reached: an account holds at most ${this.maxFiles} files; delete some first`,
        {
          code: "file_limit_reached",
        },
      );
    }
  }

  /**
   * Streams `source` into a temp file. Past maxBytes it stops writing and keeps consuming (so a
   * multipart parser can skip the rest of the body), calls `onOverflow` (e.g. to abort a download)
   * and finally throws 413. Any source error removes the temp file and propagates.
   */
  async stage(
    source: AsyncIterable<Uint8Array>,
    opts: { onOverflow?: () => void; param?: string } = {},
  ): Promise<StagedUpload> {
    const tmpPath = join(this.tmp, `${randomBytes(12).toString("hex")}.part`);
    // A file handle, not a write stream: each write is awaited, so a disk error is this upload's
    // error, never an 'error' event with nobody listening (which took the process down).
    const out = await open(tmpPath, "w");
    let isOpen = true;
    const head: Buffer[] = [];
    let headLen = 0;
    let bytes = 0;
    let overflow = false;
    try {
      try {
        for await (const chunk of source) {
          bytes += chunk.length;
          if (overflow) continue;
          if (bytes > this.maxBytes) {
            overflow = true;
            opts.onOverflow?.();
            continue;
          }
          if (headLen < SNIFF_BYTES) {
            head.push(Buffer.from(chunk.subarray(0, SNIFF_BYTES - headLen)));
            headLen += Math.min(chunk.length, SNIFF_BYTES - headLen);
          }
          for (let at = 0; at < chunk.length; ) at += (await out.write(chunk, at)).bytesWritten;
        }
      } catch (err) {
        if (!overflow) throw err;
      }
      await out.sync();
      isOpen = false;
      await out.close();
      if (overflow) {
        throw tooLarge(
          `file too large: at most ${this.maxBytes} bytes (128 MB) per file`,
          opts.param ?? "file",
        );
      }
      return { tmpPath, bytes, sniffed: sniff(Buffer.concat(head)) };
    } catch (err) {
      if (isOpen) await out.close().catch(() => {});
      await rm(tmpPath, { force: true });
      throw err;
    }
  }

  async discard(staged: StagedUpload): Promise<void> {
    await rm(staged.tmpPath, { force: true });
  }

  /** Validates a staged upload (format by content, static GIF, size, account limit) and stores it. */
  async commit(
    account: string,
    staged: StagedUpload,
    meta: { filename: string; purpose: string; param?: string },
  ): Promise<StoredFile> {
    const param = meta.param ?? "file";
    try {
      const s = staged.sniffed;
      if (staged.bytes === 0) throw badParam(param, "the file is empty", "empty_file");
      if (!s || !STORAGE_FORMATS.has(s.format)) {
        const seen = s ? `${s.format} ${s.kind}` : "an unrecognized format";
        throw badParam(
          param,
          `unsupported file type (content is ${seen}); allowed: ${ALLOWED_TEXT}`,
          "unsupported_file_type",
        );
      }
      if (s.format === "gif") {
        let frames: number;
        try {
          frames = await gifFrameCount(staged.tmpPath);
        } catch (err) {
          throw badParam(param, `not a valid GIF: ${(err as Error).message}`, "unsupported_file_type");
        }
        if (frames !== 1)
          throw badParam(
            param,
            `animated GIFs are not accepted (static GIF only); allowed: ${ALLOWED_TEXT}`,
            "unsupported_file_type",
          );
      }
      assertAccount(account);
      const id = `file-${randomBytes(12).toString("hex")}`;
      const dir = join(this.root, account);
      await mkdir(dir, { recursive: true });
      this.assertRoom(account);
      const finalPath = join(dir, id);
      await rename(staged.tmpPath, finalPath);
      await fsyncDir(dir);
      const file: StoredFile = {
        id,
        account,
        bytes: staged.bytes,
        createdAt: Math.floor(Date.now() / 1000),
        filename: meta.filename,
        purpose: meta.purpose,
        status: "processed",
        format: s.format,
        mime: s.mime,
        kind: s.kind,
      };
      try {
        // Synchronous from the count to the insert: no other upload of this process interleaves.
        this.assertRoom(account);
        this.db
          .prepare(
            "INSERT INTO files (id, account, bytes, created_at, filename, purpose, status, format, mime, kind) VALUES (?,?,?,?,?,?,?,?,?,?)",
          )
          .run(
            id,
            account,
            file.bytes,
            file.createdAt,
            file.filename,
            file.purpose,
            file.status,
            file.format,
            file.mime,
            file.kind,
          );
      } catch (err) {
        await rm(finalPath, { force: true });
        throw err;
      }
      return file;
    } catch (err) {
      await this.discard(staged);
      throw err;
    }
  }

  list(account: string): StoredFile[] {
    const rows = this.db
      .prepare("SELECT * FROM files WHERE account = ? ORDER BY created_at DESC, rowid DESC")
      .all(account) as unknown as Row[];
    return rows.map(fromRow);
  }

  /** The caller's file, or undefined (also for ids that are not well-formed). */
  get(account: string, id: string): StoredFile | undefined {
    if (!FILE_ID_PATTERN.test(id)) return undefined;
    const row = this.db.prepare("SELECT * FROM files WHERE account = ? AND id = ?").get(account, id) as
      | Row
      | undefined;
    return row ? fromRow(row) : undefined;
  }

  /** Absolute path of a stored file's bytes. */
  pathOf(file: StoredFile): string {
    assertAccount(file.account);
    if (!FILE_ID_PATTERN.test(file.id)) throw new Error(`bad file id ${file.id}`);
    return join(this.root, file.account, file.id);
  }

  async delete(account: string, id: string): Promise<boolean> {
    const file = this.get(account, id);
    if (!file) return false;
    this.db.prepare("DELETE FROM files WHERE account = ? AND id = ?").run(account, id);
    await unlink(this.pathOf(file)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== "ENOENT") throw err;
    });
    return true;
  }

  /** Size on disk (to check the store against the metadata in tests and sweeps). */
  async sizeOnDisk(file: StoredFile): Promise<number> {
    return (await stat(this.pathOf(file))).size;
  }
}

export function toFileObject(f: StoredFile): FileObject {
  return {
    id: f.id,
    object: "file",
    bytes: f.bytes,
    created_at: f.createdAt,
    filename: f.filename,
    purpose: f.purpose,
    status: f.status,
  };
}

function fromRow(r: Row): StoredFile {
  return {
    id: r.id,
    account: r.account,
    bytes: r.bytes,
    createdAt: r.created_at,
    filename: r.filename,
    purpose: r.purpose,
    status: r.status,
    format: r.format,
    mime: r.mime,
    kind: r.kind,
  };
}

function assertAccount(account: string): void {
  if (!ACCOUNT_PATTERN.test(account)) throw new Error(`bad account id ${account}`);
}
