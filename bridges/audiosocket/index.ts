// Asterisk AudioSocket bridge: what src/main.ts and the tests use.
export type { AudioSocketSink } from "./call-transport.ts";
export { AudioSocketCallTransport } from "./call-transport.ts";
export type { ConnectionLimits } from "./connection.ts";
export type { AudioSocketServer, AudioSocketServerOptions } from "./server.ts";
export { DEFAULT_LIMITS, startAudioSocketServer } from "./server.ts";
export type { AudioSocketStats } from "./stats.ts";
