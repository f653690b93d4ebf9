// What the engines that forward to an upstream server share (chat → chat-completions server,
// ASR → transcriptions server, TTS → speech server): the URL of an endpoint, the error when the
// upstream cannot be reached, answers an error status or something malformed, and a deadline that
// turns a silent upstream into an error instead of a hang. Every message names the upstream.
import {
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
} from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { ApiError } from "../errors.ts";

export interface UpstreamOptions {
  /** Base URL of the server: its root (http://host:8000) or its …/v1; both work. */
  baseUrl: string;
  apiKey?: string | undefined;
  /** Model name sent upstream. */
  model?: string | undefined;
  /** Longest wait for the answer to start, and between two pieces of it (default 30 s). */
  timeoutMs?: number | undefined;
}

export const DEFAULT_UPSTREAM_TIMEOUT_MS = 30_000;

/** `{base}/v1{path}`, whether or not the configured base already ends in /v1. */
export function v1Url(baseUrl: string, path: string): string {
  const base = baseUrl.replace(/\/+$/, "");
  return `${/\/v1$/.test(base) ? base : `${base}/v1`}${path}`;
}

export function bearer(apiKey: string | undefined): Record<string, string> {
  return apiKey ? { authorization: `Bearer ${apiKey}` } : {};
}

/** The message of an upstream's error body (OpenAI's {error:{message}}, or plain text). */
export function upstreamMessage(text: string): string {
  try {
    const j = JSON.parse(text) as {
      error?: { message?: string } | string;
      message?: string;
      detail?: unknown;
    };
    if (typeof j.error === "string") return j.error;
    if (typeof j.detail === "string") return j.detail;
    return j.error?.message ?? j.message ?? text;
  } catch {
    return text || "(no body)";
  }
}

/** The fetch failed before an answer: connection refused, DNS, reset. */
export function unreachable(what: string, baseUrl: string, err: unknown): ApiError {
  const e = err as { code?: string; cause?: { code?: string }; message?: string };
  const cause = e.cause?.code ?? e.code ?? e.message;
  return new ApiError(500, `upstream ${what} ${baseUrl} is unreachable: ${cause}`, {
    code: "upstream_unreachable",
  });
}

/** The upstream answered an error status. 429 and 503 stay overload (503); 4xx the caller can fix pass. */
export function badStatus(what: string, baseUrl: string, upstreamStatus: number, body: string): ApiError {
  const status = [429, 503].includes(upstreamStatus)
    ? 503
    : [400, 404, 413, 422].includes(upstreamStatus)
      ? upstreamStatus
      : 500;
  return new ApiError(
    status,
    `upstream ${what} ${baseUrl} answered HTTP ${upstreamStatus}: ${upstreamMessage(body.slice(0, 500))}`,
    { code: "upstream_error" },
  );
}

/** The upstream answered 200 with something that is not what its API promises. */
export function malformed(what: string, baseUrl: string, detail: string): ApiError {
  return new ApiError(500, `upstream ${what} ${baseUrl} sent a malformed answer: ${detail}`, {
    code: "upstream_malformed",
  });
}

export function timedOut(what: string, baseUrl: string, ms: number): ApiError {
  return new ApiError(500, `upstream ${what} ${baseUrl} did not answer within ${ms} ms`, {
    code: "upstream_timeout",
  });
}

/**
 * A deadline for one upstream call: `signal` aborts when the caller's signal does, or when
 * `timeoutMs` pass without `touch()` (call it for every piece of the answer). `failure(err, …)`
 * says what a failed call throws, the timeout's error when the deadline was the reason.
 */
export class Deadline {
  readonly #ac = new AbortController();
  readonly #ms: number;
  readonly #onTimeout: () => ApiError;
  #timer: NodeJS.Timeout | undefined;
  #expired = false;
  readonly #outer: AbortSignal | undefined;
  readonly #onOuter = () => this.#ac.abort(this.#outer?.reason);

  constructor(ms: number, onTimeout: () => ApiError, outer?: AbortSignal) {
    this.#ms = ms;
    this.#onTimeout = onTimeout;
    this.#outer = outer;
    if (outer?.aborted) this.#ac.abort(outer.reason);
    else outer?.addEventListener("abort", this.#onOuter, { once: true });
    this.touch();
  }

  get signal(): AbortSignal {
    return this.#ac.signal;
  }

  touch(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#expired = true;
      this.#ac.abort(this.#onTimeout());
    }, this.#ms);
  }

  /**
   * What a failed upstream call throws: the timeout's error when the deadline expired, the
   * caller's own abort as it is, and `otherwise()` (unreachable, broken off…) for the rest.
   */
  failure(err: unknown, otherwise: () => ApiError): unknown {
    if (this.#expired) return this.#onTimeout();
    if (this.#outer?.aborted) return err;
    return otherwise();
  }

  clear(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#outer?.removeEventListener("abort", this.#onOuter);
  }
}

/** Connections to the upstreams are kept open between requests (a speech turn is a new request). */
const AGENTS = {
  "http:": new HttpAgent({ keepAlive: true }),
  "https:": new HttpsAgent({ keepAlive: true }),
} as const;

/** A 2xx answer of an upstream: its headers and its body, read as it arrives. */
export interface UpstreamAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: AsyncIterable<Buffer>;
  text(): Promise<string>;
}

async function readText(body: AsyncIterable<Buffer>): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of body) parts.push(c);
  return Buffer.concat(parts).toString("utf8");
}

/**
 * One upstream POST under a deadline: resolves with a 2xx answer whose body the caller reads
 * (calling deadline.touch() per piece and deadline.clear() at the end); any failure before that
 * is an ApiError naming the upstream. node:http with keep-alive rather than fetch: about a
 * millisecond less per request, which a speech turn waits for.
 */
export async function postUpstream(
  what: string,
  opts: UpstreamOptions,
  path: string,
  init: { headers: Record<string, string>; body: string | Buffer },
  outer?: AbortSignal,
): Promise<{ res: UpstreamAnswer; deadline: Deadline }> {
  const ms = opts.timeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
  const deadline = new Deadline(ms, () => timedOut(what, opts.baseUrl, ms), outer);
  const url = new URL(v1Url(opts.baseUrl, path));
  const body = typeof init.body === "string" ? Buffer.from(init.body) : init.body;
  let msg: IncomingMessage;
  try {
    msg = await new Promise<IncomingMessage>((resolve, reject) => {
      const send = url.protocol === "https:" ? httpsRequest : httpRequest;
      const req = send(
        url,
        {
          method: "POST",
          agent: AGENTS[url.protocol as keyof typeof AGENTS],
          headers: { ...init.headers, ...bearer(opts.apiKey), "content-length": body.length },
          signal: deadline.signal,
        },
        resolve,
      );
      req.on("error", reject);
      req.end(body);
    });
  } catch (err) {
    deadline.clear();
    throw deadline.failure(err, () => unreachable(what, opts.baseUrl, err));
  }
  const status = msg.statusCode ?? 0;
  const res: UpstreamAnswer = { status, headers: msg.headers, body: msg, text: () => readText(msg) };
  if (status < 200 || status >= 300) {
    const text = await res.text().catch(() => "");
    deadline.clear();
    throw badStatus(what, opts.baseUrl, status, text);
  }
  return { res, deadline };
}
