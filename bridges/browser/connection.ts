// One accepted browser-call WebSocket: the call starts at once (the page opens the socket when
// the person presses "Call the agent"), and the socket's messages go to its transport.
import { randomBytes } from "node:crypto";
import type { Clock } from "../../src/core/clock.ts";
import type { Logger } from "../../src/core/log.ts";
import type { CallTransport } from "../transport.ts";
import type { ServerWebSocket } from "../websocket-server.ts";
import { BrowserCallTransport } from "./call-transport.ts";
import { parseClientMessage } from "./protocol.ts";

/** Refused messages after which the page is taken to be broken and the call is closed. */
const MAX_BAD_MESSAGES = 50;

export interface BrowserConnectionOptions {
  ws: ServerWebSocket;
  /** The caller's address, for the record's `from`. */
  remote: string;
  userAgent: string | undefined;
  /** The agent asked for (`?agent=NAME`), the call's `to`. */
  to?: string | undefined;
  log: Logger;
  clock: Clock;
  leadMs?: number | undefined;
  onCall(transport: CallTransport): void;
}

/** The samples of a binary message (little-endian, as every platform Node runs on). */
function samplesOf(bytes: Buffer): Int16Array {
  if (bytes.byteOffset % 2 === 0) return new Int16Array(bytes.buffer, bytes.byteOffset, bytes.length / 2);
  const copy = new Int16Array(bytes.length / 2);
  new Uint8Array(copy.buffer).set(bytes);
  return copy;
}

export function serveBrowserCall(opts: BrowserConnectionOptions): BrowserCallTransport {
  const { ws } = opts;
  const callId = `BR${randomBytes(16).toString("hex")}`;
  const log = opts.log.child({ callId });
  const call = new BrowserCallTransport({
    socket: { send: (data) => ws.send(data), close: (code, reason) => ws.close(code, reason) },
    callId,
    from: `browser ${opts.remote}`,
    to: opts.to,
    params: { remote: opts.remote, ...(opts.userAgent ? { userAgent: opts.userAgent } : {}) },
    log,
    clock: opts.clock,
    ...(opts.leadMs !== undefined ? { leadMs: opts.leadMs } : {}),
  });
  let bad = 0;
  const refuse = (problem: string) => {
    bad++;
    if (bad <= 5) log.warn({ problem }, "browser call: message refused");
    ws.send(JSON.stringify({ type: "error", message: problem }));
    if (bad >= MAX_BAD_MESSAGES) ws.close(1008, "too many malformed messages");
  };

  ws.on("message", (bytes, isBinary) => {
    if (isBinary) {
      if (bytes.length % 2 !== 0) {
        refuse(`audio: binary messages are 16-bit samples, got an odd number of bytes (${bytes.length})`);
        return;
      }
      call.handleAudio(samplesOf(bytes));
      return;
    }
    const parsed = parseClientMessage(bytes.toString());
    if (parsed.ok) call.handleMessage(parsed.message);
    else refuse(parsed.problem);
  });
  ws.on("error", (err) => log.warn({ err }, "browser call socket error"));
  ws.on("close", (code) => {
    call.handleEnd(
      code === 1000 || code === 1001 ? "caller hung up" : `browser call socket closed (${code})`,
    );
  });

  log.info({ from: call.info.from, userAgent: opts.userAgent }, "browser call: microphone connected");
  call.ready();
  try {
    opts.onCall(call);
  } catch (err) {
    log.error({ err }, "the session refused the call: closing the browser call");
    ws.close(1011, "session error");
  }
  return call;
}
