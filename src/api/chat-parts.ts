// Builders for E1 multimodal content parts: data URLs from bytes, and svcfile:// references.
import type { ImageDetail, ImageUrlPart, InputAudioPart, TextPart, VideoUrlPart } from "./types/chat.ts";
import { FILE_REF_SCHEME } from "./types/chat.ts";

/** `data:<mime>;base64,<data>`. */
export function dataUrl(bytes: Uint8Array, mime: string): string {
  return `data:${mime};base64,${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")}`;
}

/** `svcfile://<file_id>`: a stored file (E9) referenced from a part. */
export function fileRef(fileId: string): string {
  return FILE_REF_SCHEME + fileId;
}

export function textPart(text: string): TextPart {
  return { type: "text", text };
}

/** An image from a URL / data URL / svcfile:// reference, or from bytes with their format. */
export function imagePart(
  src: string | { bytes: Uint8Array; format: "jpeg" | "jpg" | "png" | "webp" | "gif" },
  detail?: ImageDetail,
): ImageUrlPart {
  const url =
    typeof src === "string" ? src : dataUrl(src.bytes, `image/${src.format === "jpg" ? "jpeg" : src.format}`);
  return { type: "image_url", image_url: detail ? { url, detail } : { url } };
}

export function videoPart(src: string | { bytes: Uint8Array; format: "mp4" | "mov" | "mkv" }): VideoUrlPart {
  const mime = { mp4: "video/mp4", mov: "video/quicktime", mkv: "video/x-matroska" } as const;
  const url = typeof src === "string" ? src : dataUrl(src.bytes, mime[src.format]);
  return { type: "video_url", video_url: { url } };
}

/** Audio as a Base64 data URL; only mp3 and wav are accepted. */
export function audioPart(bytes: Uint8Array, format: "mp3" | "wav"): InputAudioPart {
  return { type: "input_audio", input_audio: { data: dataUrl(bytes, `audio/${format}`) } };
}
