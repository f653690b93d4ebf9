// Request core: bearer auth, a timeout and the caller's AbortSignal on every call, retries with
// exponential backoff and jitter on 408/409/429/5xx and connection failures (honouring
// retry-after), and never a retry once a response body has started to stream.
import type { IncomingMessage } from "node:http";
import {
  errorFromStatus,
  SvcAbortError,
  SvcConnectionError,
  type SvcError,
  SvcStreamCutError,
  SvcTimeoutError,
} from "./errors.ts";
import {
  headerOf,
  headersOf,
  readAll,
  StaleConnectionError,
  sendOnWire,
  type WireBody,
} from "./http-wire.ts";

/** The subset of a pino logger the client uses; a pino Logger fits it. */
export interface SvcLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface HttpConfig {
  /** Root of the service, without `/v1` (a trailing `/v1` is removed). */
  baseURL: string;
  apiKey: string;
  timeoutMs: number;
  maxRetries: number;
  logger?: SvcLogger | undefined;
  /** First backoff delay; doubles per attempt. */
  retryBaseMs?: number | undefined;
  /** Largest backoff delay. */
  retryMaxMs?: number | undefined;
}

/** Per-call options accepted by every client method. */
export interface CallOptions {
  signal?: AbortSignal;
  /** Overrides the client's timeout for this call: time to the answer, to read a whole body, or for a stream the longest gap between chunks. */
  timeoutMs?: number;
  maxRetries?: number;
  headers?: Record<string, string>;
}

export interface HttpRequest {
  method: "GET" | "POST" | "DELETE";
  /** Path from the root, with its prefix, e.g. `/v1/files`. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  json?: unknown;
  form?: FormData;
  /**
   * A JSON body sent while it is being produced (chunked transfer). It cannot be replayed, so the
   * request is never retried, and the answer's timeout starts only once `ended` resolves.
   */
  upload?: { body: ReadableStream<Uint8Array>; ended: Promise<void> };
  accept?: string;
}

const RETRY_STATUSES = new Set([408, 409, 429]);
/** Requests sent again at once after finding their kept-alive connection closed (see StaleConnectionError). */
const MAX_STALE_RESENDS = 4;

/** A retry-after beyond this is not waited for: the error is raised at once. */
const MAX_RETRY_AFTER_MS = 60_000;

export function isRetryableStatus(status: number): boolean {
  return RETRY_STATUSES.has(status) || status >= 500;
}

/** Delay asked by `retry-after-ms` / `retry-after` (seconds or HTTP date), or undefined. */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const ms = headers.get("retry-after-ms");
  if (ms !== null && /^\d+(\.\d+)?$/.test(ms.trim())) return Number(ms);
  const ra = headers.get("retry-after");
  if (ra === null) return undefined;
  if (/^\d+(\.\d+)?$/.test(ra.trim())) return Number(ra) * 1000;
  const date = Date.parse(ra);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Exponential backoff with jitter (random 0–25 % off), capped. */
export function backoffMs(attempt: number, baseMs: number, maxMs: number, rand = Math.random): number {
  const d = Math.min(maxMs, baseMs * 2 ** attempt);
  return Math.round(d * (1 - 0.25 * rand()));
}

/** One attempt's abort state: the caller's signal and the timeout, told apart. */
class AttemptSignal {
  readonly controller = new AbortController();
  timedOut = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly user: AbortSignal | undefined;
  private readonly timeoutMs: number;
  private readonly onUserAbort = () => this.controller.abort(this.user?.reason);

  constructor(user: AbortSignal | undefined, timeoutMs: number) {
    this.user = user;
    this.timeoutMs = timeoutMs;
    user?.addEventListener("abort", this.onUserAbort, { once: true });
    this.arm();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get userAborted(): boolean {
    return this.user?.aborted === true;
  }

  /** Stop the timeout until the next arm(): the body's reader decides when reading starts. */
  disarm(): void {
    clearTimeout(this.timer);
  }

  /** (Re)start the timeout, e.g. after each stream chunk. */
  arm(): void {
    clearTimeout(this.timer);
    if (this.timeoutMs > 0 && Number.isFinite(this.timeoutMs)) {
      this.timer = setTimeout(() => {
        this.timedOut = true;
        this.controller.abort(new Error("timeout"));
      }, this.timeoutMs);
      this.timer.unref?.();
    }
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.user?.removeEventListener("abort", this.onUserAbort);
  }
}

/**
 * How long the rest of a body may take to end once its last event was read; a server that goes on
 * sending after it (or never ends the body) loses the connection instead of keeping it.
 */
const BODY_TAIL_MS = 2_000;

/**
 * Reads what follows a stream's last event to the body's end, so the socket is kept alive. The
 * reader's iterator lets go of the body first (its 'readable' listener would keep it paused).
 */
async function finishQuietly(res: IncomingMessage, it: AsyncIterator<Buffer>): Promise<void> {
  // A reset now has no reader left to fail: it only loses the connection.
  res.on("error", () => {});
  await it.return?.();
  if (res.complete || res.destroyed) return;
  const timer = setTimeout(() => res.destroy(), BODY_TAIL_MS);
  timer.unref();
  res.once("close", () => clearTimeout(timer));
  res.resume();
}

/** An answered request whose body has not been read yet. Reading it is never retried. */
export class Exchange {
  readonly status: number;
  readonly requestId: string | undefined;
  readonly #res: IncomingMessage;
  #lastEventSeen = false;
  private readonly attempt: AttemptSignal;
  private readonly what: string;

  constructor(res: IncomingMessage, requestId: string | undefined, attempt: AttemptSignal, what: string) {
    this.#res = res;
    this.status = res.statusCode ?? 0;
    this.requestId = requestId;
    this.attempt = attempt;
    this.what = what;
    attempt.disarm();
  }

  /** One header of the answer (repeated ones joined with ", "). */
  header(name: string): string | undefined {
    return headerOf(this.#res, name.toLowerCase());
  }

  async text(): Promise<string> {
    return (await this.bytes()).toString("utf8");
  }

  async bytes(): Promise<Buffer> {
    this.attempt.arm();
    try {
      return await readAll(this.#res);
    } catch (e) {
      throw this.readError(e, false);
    } finally {
      this.attempt.dispose();
    }
  }

  async json<T>(): Promise<T> {
    const text = await this.text();
    try {
      return JSON.parse(text) as T;
    } catch (e) {
      throw new SvcConnectionError(`${this.what}: answer is not JSON (${text.slice(0, 80)})`, {
        status: this.status,
        requestId: this.requestId,
        cause: e,
      });
    }
  }

  /**
   * The reader saw the stream's last event ([DONE], message_stop, transcript.text.done…): when it
   * stops reading there, what is left (the chunked body's terminator) is read and dropped instead
   * of the connection, which then serves the next request. Dropping it cost every streamed call a
   * new connection: at 200 calls ~40 connects a second to the local service, and to a hosted one a
   * TLS handshake before each chat stream (E6 uploads take a new one anyway: http-wire.ts).
   */
  sawLastEvent(): void {
    this.#lastEventSeen = true;
  }

  /** The body as it arrives; the timeout becomes the longest allowed gap between chunks. */
  async *chunks(): AsyncGenerator<Uint8Array> {
    // Not destroyed on return: an early exit either finishes the body (sawLastEvent) or drops it.
    const it = this.#res.iterator({ destroyOnReturn: false }) as AsyncIterator<Buffer>;
    let done = false;
    try {
      for (;;) {
        this.attempt.arm();
        let r: IteratorResult<Buffer>;
        try {
          r = await it.next();
        } catch (e) {
          done = true;
          throw this.readError(e, true);
        }
        if (r.done) {
          done = true;
          return;
        }
        yield r.value;
      }
    } finally {
      this.attempt.dispose();
      if (!done && this.#lastEventSeen) await finishQuietly(this.#res, it);
      else if (!done) this.#res.destroy();
    }
  }

  /** Drop the body without reading it (once its last event was read, the rest is finished instead). */
  async cancel(): Promise<void> {
    this.attempt.dispose();
    if (!this.#lastEventSeen) this.#res.destroy();
  }

  private readError(e: unknown, streaming: boolean): SvcError {
    const fields = { requestId: this.requestId, status: this.status, cause: e };
    if (this.attempt.userAborted) return new SvcAbortError(`${this.what}: aborted`, fields);
    if (this.attempt.timedOut)
      return new SvcTimeoutError(`${this.what}: timed out reading the answer`, fields);
    return streaming
      ? new SvcStreamCutError(`${this.what}: connection lost mid-stream`, fields)
      : new SvcConnectionError(`${this.what}: connection lost reading the answer`, fields);
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export class HttpCore {
  readonly baseURL: string;
  private readonly cfg: HttpConfig;

  constructor(cfg: HttpConfig) {
    this.cfg = cfg;
    this.baseURL = cfg.baseURL.replace(/\/+$/, "").replace(/\/v1$/, "");
  }

  get logger(): SvcLogger | undefined {
    return this.cfg.logger;
  }

  #url(path: string, query?: HttpRequest["query"]): URL {
    const u = new URL(this.baseURL + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) u.searchParams.set(k, String(v));
    return u;
  }

  /**
   * Send the request, retrying on retryable failures, until a 2xx answer arrives; its body is left
   * unread for the caller. Non-2xx answers become SvcHttpError subclasses.
   */
  async send(req: HttpRequest, opts: CallOptions = {}): Promise<Exchange> {
    const what = `${req.method} ${req.path}`;
    const maxRetries = req.upload ? 0 : (opts.maxRetries ?? this.cfg.maxRetries);
    const timeoutMs = opts.timeoutMs ?? this.cfg.timeoutMs;
    const url = this.#url(req.path, req.query);
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.cfg.apiKey}`,
      accept: req.accept ?? "application/json",
      ...opts.headers,
    };
    let body: WireBody;
    if (req.upload) {
      headers["content-type"] = "application/json";
      body = req.upload.body;
    } else if (req.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(req.json);
    } else if (req.form !== undefined) {
      // Fetch's multipart encoder, boundary and all; files and voices only, never on a call's path.
      const encoded = new Response(req.form);
      headers["content-type"] = encoded.headers.get("content-type") ?? "multipart/form-data";
      body = new Uint8Array(await encoded.arrayBuffer());
    }
    let stale = 0;
    for (let attempt = 0; ; ) {
      if (opts.signal?.aborted) throw new SvcAbortError(`${what}: aborted`, { cause: opts.signal.reason });
      this.cfg.logger?.debug({ method: req.method, path: req.path, attempt }, "svc request");
      const out = await this.attempt(url, req, headers, body, opts.signal, timeoutMs, what);
      if (out instanceof Exchange) return out;
      const { failure, retryable, delay } = out;
      // Not a failure of the service: sent again at once, outside the retry budget. Bounded, for
      // a pool whose every idle connection the server dropped together (it restarted).
      if (out.stale && !req.upload && stale < MAX_STALE_RESENDS) {
        stale++;
        this.cfg.logger?.debug({ path: req.path, resend: stale }, "svc connection was stale, sending again");
        continue;
      }
      if (!retryable || attempt >= maxRetries) throw failure;
      if (delay !== undefined && delay > MAX_RETRY_AFTER_MS) throw failure;
      const wait = delay ?? backoffMs(attempt, this.cfg.retryBaseMs ?? 500, this.cfg.retryMaxMs ?? 8000);
      this.cfg.logger?.warn(
        { path: req.path, attempt, status: failure.status, error: failure.message, retryInMs: wait },
        "svc request failed, retrying",
      );
      try {
        await sleep(wait, opts.signal);
      } catch (e) {
        throw new SvcAbortError(`${what}: aborted`, { cause: e });
      }
      attempt++;
    }
  }

  private async attempt(
    url: URL,
    req: HttpRequest,
    headers: Record<string, string>,
    body: WireBody,
    user: AbortSignal | undefined,
    timeoutMs: number,
    what: string,
  ): Promise<
    Exchange | { failure: SvcError; retryable: boolean; delay?: number | undefined; stale?: boolean }
  > {
    const sig = new AttemptSignal(user, timeoutMs);
    const t0 = performance.now();
    let res: IncomingMessage;
    let answered = false;
    if (req.upload) {
      sig.disarm(); // the answer is not due before the body has been sent
      req.upload.ended.then(
        () => answered || sig.arm(),
        () => {},
      );
    }
    try {
      res = await sendOnWire({ url, method: req.method, headers, body, signal: sig.signal });
      answered = true;
    } catch (e) {
      sig.dispose();
      if (sig.userAborted)
        return { failure: new SvcAbortError(`${what}: aborted`, { cause: e }), retryable: false };
      const failure = sig.timedOut
        ? new SvcTimeoutError(`${what}: no answer within ${timeoutMs} ms`, { cause: e })
        : new SvcConnectionError(`${what}: ${causeText(e)}`, { cause: e });
      return { failure, retryable: true, stale: e instanceof StaleConnectionError };
    }
    const requestId = headerOf(res, "x-request-id") ?? headerOf(res, "request-id");
    const status = res.statusCode ?? 0;
    if (status >= 200 && status < 300) {
      this.cfg.logger?.debug(
        { path: req.path, status, requestId, ms: Math.round(performance.now() - t0) },
        "svc answer",
      );
      return new Exchange(res, requestId, sig, what);
    }
    let text = "";
    try {
      text = (await readAll(res)).toString("utf8");
    } catch {
      // a body that fails to arrive still leaves the status to report
    }
    sig.dispose();
    if (sig.userAborted) return { failure: new SvcAbortError(`${what}: aborted`), retryable: false };
    const delay = retryAfterMs(headersOf(res));
    const failure = errorFromStatus(status, text, requestId, delay);
    return { failure, retryable: isRetryableStatus(status), delay };
  }
}

function causeText(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  const codeOf = (x: unknown) =>
    typeof x === "object" && x !== null ? (x as { code?: unknown }).code : undefined;
  const code = codeOf(e) ?? codeOf((e as { cause?: unknown }).cause);
  return typeof code === "string" && !e.message.includes(code) ? `${e.message} (${code})` : e.message;
}
