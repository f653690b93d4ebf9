// Creating a cloned voice (the spec does not show this endpoint; docs/local-service.md "Images and cloned
// voices"): POST /v1/audio/voices {file_id}. The stored file must be mp3 or wav audio of 5 to 10
// seconds; the engine measures its pitch and pace (engines/tts/clone) and keeps the espeak-ng
// parameters that reproduce them. A second voice from the same file reuses the measurement.
import { readFile } from "node:fs/promises";
import { LIMITS } from "../../api/types/limits.ts";
import type { VoiceCreateRequest, VoiceEntry } from "../../api/types/voices.ts";
import type { ServiceContext } from "../context.ts";
import { CLONE_ANALYSIS_RATE, CloneError, cloneVoice } from "../engines/tts/clone/derive.ts";
import { ApiError, badParam, missingParam, notFound, unusable } from "../errors.ts";
import { probeDuration } from "../media/probe.ts";
import { ffmpegDecode } from "../speech/ffmpeg.ts";
import type { StoredVoice, VoiceStore } from "../store/voices.ts";

/** Codec padding (an mp3 frame is 26 ms at 44.1 kHz) must not push a 10 s sample over the limit. */
const LENGTH_TOLERANCE_S = 0.1;
const CLONE_FORMATS = ["mp3", "wav"];

export function toVoiceEntry(v: StoredVoice): VoiceEntry {
  return { id: v.id, file_id: v.fileId, created_at: v.createdAt };
}

function checkLength(seconds: number): void {
  const { min, max } = LIMITS.voiceCloneSeconds;
  if (seconds < min - LENGTH_TOLERANCE_S || seconds > max + LENGTH_TOLERANCE_S) {
    throw badParam(
      "file_id",
      `the audio is ${seconds.toFixed(2)} s long; voice cloning needs ${min} to ${max} seconds of speech`,
      "invalid_audio_length",
    );
  }
}

export async function createVoice(
  ctx: ServiceContext,
  store: VoiceStore,
  account: string,
  body: unknown,
): Promise<StoredVoice> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw badParam("body", "must be a JSON object {file_id}");
  }
  const fileId = (body as Partial<VoiceCreateRequest>).file_id;
  if (fileId === undefined || fileId === null || fileId === "") {
    throw missingParam(
      "file_id",
      "the id of a stored mp3 or wav file (POST /v1/files) with 5 to 10 s of speech",
    );
  }
  if (typeof fileId !== "string") throw badParam("file_id", "must be a string");
  const file = ctx.files.get(account, fileId);
  if (!file) throw notFound(`no such file: ${JSON.stringify(fileId)}`, "file_id", "file_not_found");
  if (!CLONE_FORMATS.includes(file.format)) {
    throw badParam(
      "file_id",
      `voice cloning needs mp3 or wav audio; ${fileId} is ${file.format} ${file.kind}`,
      "unsupported_file_type",
    );
  }
  const earlier = store.fromFile(account, fileId);
  if (earlier) return store.create(account, fileId, earlier.voice, earlier.sample);

  const path = ctx.files.pathOf(file);
  let pcm: Int16Array;
  try {
    // The header's length first, so that a long file is refused without decoding it.
    checkLength(await probeDuration(path));
    pcm = await ffmpegDecode(await readFile(path), CLONE_ANALYSIS_RATE);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw unusable(
      "file_id",
      `the audio could not be decoded: ${(err as Error).message}`,
      "undecodable_audio",
    );
  }
  checkLength(pcm.length / CLONE_ANALYSIS_RATE);
  let cloned: ReturnType<typeof cloneVoice>;
  try {
    cloned = cloneVoice(pcm);
  } catch (err) {
    if (err instanceof CloneError) throw unusable("file_id", err.message, "no_speech");
    throw err;
  }
  const voice = store.create(account, fileId, cloned.voice, cloned.sample);
  ctx.log.info(
    { account, voice: voice.id, file: fileId, sample: cloned.sample, engine: cloned.voice },
    "cloned voice created",
  );
  return voice;
}
