// E9 files.
import type { OpenString } from "./common.ts";

export const FILE_PURPOSES = ["storage", "file-extract"] as const;
/** The only purpose accepted on upload. */
export const FILE_UPLOAD_PURPOSES = ["storage"] as const;
export const FILE_STATUSES = ["processed", "success"] as const;

/** Uploadable extensions for `storage` (video, images, audio; audio for cloning is 5–10 s). */
export const FILE_UPLOAD_FORMATS = ["mp4", "jpg", "jpeg", "png", "webp", "gif", "mp3", "wav"] as const;

export interface FileObject {
  /** Prefix `file-` in samples. */
  id: string;
  object: "file";
  bytes: number;
  created_at: number;
  filename: string;
  purpose: OpenString<(typeof FILE_PURPOSES)[number]>;
  /** Values beyond the two that occur are not shown. */
  status: OpenString<(typeof FILE_STATUSES)[number]>;
}

export interface FileList {
  object: "list";
  data: FileObject[];
}

export interface FileDeleted {
  id: string;
  object: "file";
  deleted: boolean;
}

/**
 * Upload form fields: `purpose` (required, `storage`), a `file` part (optional) and/or `url`
 * (optional remote URL). When both are given, `file` wins.
 */
export interface FileUploadFields {
  purpose: (typeof FILE_UPLOAD_PURPOSES)[number];
  url?: string;
}

/** Name of the upload form part holding the file. */
export const FILE_UPLOAD_FILE_FIELD = "file";
