// The wire under the request core (http.ts): one request on node's own HTTP client, over
// keep-alive sockets, its answer's head returned with the body left to read.
//
// Not fetch: undici's fetch builds WHATWG streams, a Request/Response pair and (unless redirects
// are refused) a tee of the body for every request. Measured on one POST with a small JSON answer
// (this machine, 2026-11-28): ~75 KB of objects and ~0.3 ms more CPU per request than node:http's
// ~25 KB. At 200 calls the bridge makes ~40 requests a second (a recognition upload and a chat
// stream per turn), whose objects live as long as the turn, so the young generation's
// collections copy them to the old one: they were ~30 % of what survived a scavenge.
import {
  type ClientRequest,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
} from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";

/** What a request carries: text, bytes, or a stream written as it is read (chunked). */
export type WireBody = string | Uint8Array | ReadableStream<Uint8Array> | undefined;

export interface WireRequest {
  url: URL;
  method: string;
  headers: OutgoingHttpHeaders;
  body: WireBody;
  /** Aborting destroys the connection: a pending answer rejects, a body being read errors. */
  signal: AbortSignal;
}

// Shared by every client of the process, as fetch's dispatcher was; idle sockets do not keep the
// process alive, and node drops them before the server's Keep-Alive timeout.
const httpAgent = new HttpAgent({ keepAlive: true });
const httpsAgent = new HttpsAgent({ keepAlive: true });

/**
 * The connection a request goes over. A body written as it is produced (an E6 upload) gets a new
 * one: a kept-alive socket can be closed by the server just as it is taken, and such a body cannot
 * be sent again, so the turn's words would be lost; every other request is retried after that. A
 * new connection costs the upload nothing that the caller waits for: it opens as the caller starts
 * speaking and streams while they speak.
 */
function agentFor(https: boolean, body: WireBody): HttpAgent | false {
  if (body instanceof ReadableStream) return false;
  return https ? httpsAgent : httpAgent;
}

/**
 * A kept-alive connection that the server closed as the request went out on it (its idle timeout
 * and our reuse crossed). The server never read the request, so it is sent again at once on another
 * connection, as node's documentation advises, not after a failure's backoff.
 */
export class StaleConnectionError extends Error {
  constructor(cause: Error) {
    super(`kept-alive connection closed by the server as it was reused (${cause.message})`, { cause });
    this.name = "StaleConnectionError";
  }
}

function isReset(e: Error): boolean {
  const code = (e as NodeJS.ErrnoException).code;
  return code === "ECONNRESET" || code === "EPIPE";
}

/** Sends the request; resolves with the answer's status and headers once they arrive. */
export function sendOnWire(r: WireRequest): Promise<IncomingMessage> {
  const https = r.url.protocol === "https:";
  if (!https && r.url.protocol !== "http:")
    return Promise.reject(new TypeError(`unsupported protocol ${r.url.protocol} in ${r.url.origin}`));
  const headers = { ...r.headers };
  if (typeof r.body === "string") headers["content-length"] = Buffer.byteLength(r.body);
  else if (r.body instanceof Uint8Array) headers["content-length"] = r.body.byteLength;
  return new Promise<IncomingMessage>((resolve, reject) => {
    const options = {
      method: r.method,
      headers,
      signal: r.signal,
      agent: agentFor(https, r.body),
    };
    const req = https ? httpsRequest(r.url, options) : httpRequest(r.url, options);
    let answered = false;
    req.once("response", (res) => {
      answered = true;
      resolve(res);
    });
    // Kept after the answer: an abort or a reset mid-body errors the request again, and an
    // 'error' with no listener would throw. The body's reader sees that failure on its own.
    req.on("error", (e) =>
      reject(!answered && req.reusedSocket && isReset(e) ? new StaleConnectionError(e) : e),
    );
    if (r.body === undefined) req.end();
    else if (typeof r.body === "string" || r.body instanceof Uint8Array) req.end(r.body);
    else writeStream(req, r.body);
  });
}

/**
 * Writes a body stream as the connection takes it: the next chunk is read only once the last one
 * is out, so what waits stays in the stream's own (bounded) queue, not in the socket's.
 */
async function writeStream(req: ClientRequest, body: ReadableStream<Uint8Array>): Promise<void> {
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (req.destroyed) return;
      if (!req.write(value)) {
        await drainedOrClosed(req);
        if (req.destroyed) return;
      }
    }
    req.end();
  } catch (e) {
    req.destroy(e instanceof Error ? e : new Error(String(e)));
  } finally {
    if (req.destroyed) await reader.cancel().catch(() => {});
  }
}

function drainedOrClosed(req: ClientRequest): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      req.off("drain", done);
      req.off("close", done);
      resolve();
    };
    req.on("drain", done);
    req.on("close", done);
  });
}

/** The whole body as bytes. */
export async function readAll(res: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of res) parts.push(chunk as Buffer);
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
}

/** A header's value, repeated ones joined with ", " as Fetch's Headers does. */
export function headerOf(res: IncomingMessage, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v.join(", ") : v;
}

/** The answer's headers as a Fetch Headers object (built on demand: few callers want it). */
export function headersOf(res: IncomingMessage): Headers {
  const h = new Headers();
  const raw = res.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) h.append(raw[i]!, raw[i + 1]!);
  return h;
}
