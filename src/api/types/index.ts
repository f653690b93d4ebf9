// The wire types of the service spec (E1–E10), one definition each, shared by the client (src/api)
// and the local service (src/service). Constant lists and limits are shared the same way.
export * from "./asr.ts";
export * from "./chat.ts";
export * from "./common.ts";
export * from "./errors.ts";
export * from "./files.ts";
export * from "./images.ts";
export * from "./limits.ts";
export * from "./messages.ts";
export * from "./paths.ts";
export * from "./responses.ts";
export * from "./speech.ts";
export * from "./tts-ws.ts";
export * from "./voices.ts";
