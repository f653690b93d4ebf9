// Public surface of the service client. The bridge and users import from here; the wire types
// alone are also available from ./types/index.ts (shared with the local service).
export {
  type AsrOptions,
  type AsrResult,
  AsrStream,
  type AudioInput,
  audioToBase64,
  pcm16Format,
} from "./asr.ts";
export type { BacklogLimits, BacklogQueue, ShedEvent } from "./backlog.ts";
export { type ChatRequest, ChatStream } from "./chat.ts";
export { ChatAccumulator } from "./chat-accumulate.ts";
export { audioPart, dataUrl, fileRef, imagePart, textPart, videoPart } from "./chat-parts.ts";
export { SvcClient, type SvcClientOptions } from "./client.ts";
export * from "./errors.ts";
export type { FileSource } from "./files.ts";
export type { CallOptions, SvcLogger } from "./http.ts";
export { type ImageDims, imageDimensions } from "./image-size.ts";
export type { ImageEditParams } from "./images.ts";
export { MessagesAccumulator, type MessagesCreateRequest, MessagesStream } from "./messages.ts";
export {
  outputText,
  ResponsesAccumulator,
  type ResponsesCreateRequest,
  ResponsesStream,
} from "./responses.ts";
export { type SpeechAudio, type SpeechParams, SpeechStream } from "./speech.ts";
export { readSse, SseDecoder, type SseEvent, SseTruncatedError } from "./sse.ts";
export {
  type TtsEndReason,
  type TtsOutput,
  TtsSession,
  type TtsSessionOptions,
  type TtsSessionState,
} from "./tts-session.ts";
export * from "./types/index.ts";
