// What the engines that forward to an upstream server share (chat → chat-completions server,
// ASR → transcriptions server, TTS → speech server): the URL of an endpoint, the error when the
// upstream cannot be reached, answers an error status or something malformed, and a deadline that
// turns a silent upstream into an error instead of a hang. Every message names the upstream.
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
  const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
  return new ApiError(500, `upstream ${what} ${baseUrl} is unreachable: ${cause}`, {
    code: "upstream_unreachable",
  });
}

/** The upstream answered an error status. 429 and 503 stay overload (503); 4xx the caller can fix pass. */
export async function badStatus(what: string, baseUrl: string, res: Response): Promise<ApiError> {
  const text = (await res.text().catch(() => "")).slice(0, 500);
  const status = [429, 503].includes(res.status)
    ? 503
    : [400, 404, 413, 422].includes(res.status)
      ? res.status
      : 500;
  return new ApiError(
    status,
    `upstream ${what} ${baseUrl} answered HTTP ${res.status}: ${upstreamMessage(text)}`,
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
 * `timeoutMs` pass without `touch()` (call it for every piece of the answer). `error(err)` maps
 * what the aborted fetch threw to the timeout error when the deadline was the reason.
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

  /** The error to throw for a failure of the call (the timeout's own error when it expired). */
  error(err: unknown): unknown {
    return this.#expired ? this.#onTimeout() : err;
  }

  get expired(): boolean {
    return this.#expired;
  }

  clear(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#outer?.removeEventListener("abort", this.#onOuter);
  }
}

/**
 * One upstream POST under a deadline: resolves with a 2xx answer whose body the caller reads
 * (calling deadline.touch() per piece and deadline.clear() at the end); any failure before that
 * is an ApiError naming the upstream.
 */
export async function postUpstream(
  what: string,
  opts: UpstreamOptions,
  path: string,
  init: { headers: Record<string, string>; body: string | FormData },
  outer?: AbortSignal,
): Promise<{ res: Response; deadline: Deadline }> {
  const ms = opts.timeoutMs ?? DEFAULT_UPSTREAM_TIMEOUT_MS;
  const deadline = new Deadline(ms, () => timedOut(what, opts.baseUrl, ms), outer);
  let res: Response;
  try {
    res = await fetch(v1Url(opts.baseUrl, path), {
      method: "POST",
      headers: { ...init.headers, ...bearer(opts.apiKey) },
      body: init.body,
      signal: deadline.signal,
    });
  } catch (err) {
    deadline.clear();
    if (deadline.expired) throw deadline.error(err);
    if (outer?.aborted) throw err;
    throw unreachable(what, opts.baseUrl, err);
  }
  if (!res.ok) {
    const err = await badStatus(what, opts.baseUrl, res);
    deadline.clear();
    throw err;
  }
  return { res, deadline };
}
