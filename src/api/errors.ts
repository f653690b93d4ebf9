// Errors the client raises. Every one is a SvcError; HTTP failures get one class per status family
// (and the common statuses their own subclass), carrying status, type, message and request id.
import type { ErrorBody } from "./types/errors.ts";

export interface SvcErrorFields {
  status?: number;
  type?: string;
  code?: string | number | null;
  param?: string | null;
  requestId?: string;
  cause?: unknown;
}

export class SvcError extends Error {
  override name = "SvcError";
  readonly status: number | undefined;
  readonly type: string | undefined;
  readonly code: string | number | null | undefined;
  readonly param: string | null | undefined;
  readonly requestId: string | undefined;

  constructor(message: string, fields: SvcErrorFields = {}) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.status = fields.status;
    this.type = fields.type;
    this.code = fields.code;
    this.param = fields.param;
    this.requestId = fields.requestId;
  }
}

/** A non-2xx HTTP answer. `body` is the parsed JSON error body, or the raw text when it was not JSON. */
export class SvcHttpError extends SvcError {
  override name = "SvcHttpError";
  declare readonly status: number;
  readonly body: ErrorBody | string;
  /** The wait the answer asked for before a retry (`retry-after-ms` / `retry-after`), ms. */
  readonly retryAfterMs: number | undefined;
  constructor(
    message: string,
    status: number,
    body: ErrorBody | string,
    fields: SvcErrorFields & { retryAfterMs?: number | undefined } = {},
  ) {
    super(message, { ...fields, status });
    this.body = body;
    this.retryAfterMs = fields.retryAfterMs;
  }
}

/** 4xx. */
export class SvcClientError extends SvcHttpError {
  override name = "SvcClientError";
}
export class BadRequestError extends SvcClientError {
  override name = "BadRequestError";
}
export class AuthenticationError extends SvcClientError {
  override name = "AuthenticationError";
}
export class PermissionDeniedError extends SvcClientError {
  override name = "PermissionDeniedError";
}
export class NotFoundError extends SvcClientError {
  override name = "NotFoundError";
}
export class RequestTimeoutError extends SvcClientError {
  override name = "RequestTimeoutError";
}
export class ConflictError extends SvcClientError {
  override name = "ConflictError";
}
export class PayloadTooLargeError extends SvcClientError {
  override name = "PayloadTooLargeError";
}
export class UnprocessableEntityError extends SvcClientError {
  override name = "UnprocessableEntityError";
}
export class RateLimitError extends SvcClientError {
  override name = "RateLimitError";
}
/** 5xx. */
export class SvcServerError extends SvcHttpError {
  override name = "SvcServerError";
}

const BY_STATUS: Readonly<Record<number, typeof SvcClientError>> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  408: RequestTimeoutError,
  409: ConflictError,
  413: PayloadTooLargeError,
  422: UnprocessableEntityError,
  429: RateLimitError,
};

/** The network failed (refused, reset, DNS…) before an answer arrived. */
export class SvcConnectionError extends SvcError {
  override name = "SvcConnectionError";
}
/** The call's timeout elapsed (before the answer, or between stream chunks). */
export class SvcTimeoutError extends SvcError {
  override name = "SvcTimeoutError";
}
/**
 * The service stopped taking what the client sends (a starved or paused process): more was left
 * unsent than the client's bound allows, so the request or session was given up.
 */
export class SvcBackpressureError extends SvcConnectionError {
  override name = "SvcBackpressureError";
}
/** The caller's AbortSignal fired. */
export class SvcAbortError extends SvcError {
  override name = "SvcAbortError";
}

/** A documented limit was broken; raised before anything is sent. */
export class SvcValidationError extends SvcError {
  override name = "SvcValidationError";
  readonly field: string;
  /** Human-readable allowed range or set, e.g. "1 to 50" or "one of wav, mp3". */
  readonly allowed: string;
  constructor(field: string, allowed: string, got: unknown) {
    super(`${field}: must be ${allowed} (got ${describe(got)})`, {
      param: field,
      type: "invalid_request_error",
    });
    this.field = field;
    this.allowed = allowed;
  }
}

/** A stream broke off: the connection dropped mid-body, or ended before its final event. */
export class SvcStreamCutError extends SvcError {
  override name = "SvcStreamCutError";
}

/** The server sent something the protocol does not allow (bad JSON, sequence gap, wrong order). */
export class SvcProtocolError extends SvcError {
  override name = "SvcProtocolError";
}

/** An in-band error event inside a stream (chat/messages/responses `error`, `speech.audio.error`, ASR `error`). */
export class SvcStreamEventError extends SvcError {
  override name = "SvcStreamEventError";
  /** The event as received. */
  readonly event: unknown;
  constructor(message: string, event: unknown, fields: SvcErrorFields = {}) {
    super(message, fields);
    this.event = event;
  }
}

/** E5 `tts.response.error`. */
export class TtsResponseError extends SvcError {
  override name = "TtsResponseError";
  readonly details: unknown;
  readonly sessionId: string | undefined;
  constructor(code: string, message: string, details: unknown, sessionId?: string) {
    super(`tts.response.error ${code}: ${message}`, { code, type: "tts.response.error" });
    this.details = details;
    this.sessionId = sessionId;
  }
}

/** E5 socket closed before the session finished (or refused at the handshake). */
export class TtsClosedError extends SvcError {
  override name = "TtsClosedError";
  readonly closeCode: number;
  readonly reason: string;
  /** True when the close followed the spec's 60 s idle rule (no client activity for that long). */
  readonly idle: boolean;
  constructor(
    message: string,
    closeCode: number,
    reason: string,
    idle: boolean,
    fields: SvcErrorFields = {},
  ) {
    super(message, fields);
    this.closeCode = closeCode;
    this.reason = reason;
    this.idle = idle;
  }
}

function describe(v: unknown): string {
  if (typeof v === "string") {
    const n = [...v].length;
    return n > 40 ? `${n} characters` : JSON.stringify(v);
  }
  return String(v);
}

function isErrorBody(v: unknown): v is ErrorBody {
  if (typeof v !== "object" || v === null) return false;
  const e = (v as { error?: unknown }).error;
  return typeof e === "object" && e !== null && typeof (e as { message?: unknown }).message === "string";
}

/** A short readable excerpt of a non-JSON body (HTML pages from proxies, plain text). */
function excerpt(text: string): string {
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1];
  const plain = (title ?? text.replace(/<[^>]+>/g, " ")).replace(/\s+/g, " ").trim();
  return plain.length > 200 ? `${plain.slice(0, 200)}…` : plain;
}

/** Build the error for a non-2xx answer from its status and body text. */
export function errorFromStatus(
  status: number,
  bodyText: string,
  requestId?: string,
  retryAfterMs?: number,
): SvcHttpError {
  let body: ErrorBody | string = bodyText;
  try {
    const parsed: unknown = JSON.parse(bodyText);
    if (isErrorBody(parsed)) body = parsed;
  } catch {
    // not JSON: keep the text
  }
  const fields: SvcErrorFields & { retryAfterMs?: number | undefined } = { requestId, retryAfterMs };
  let message: string;
  if (typeof body === "string") {
    message = `HTTP ${status}${bodyText ? `: ${excerpt(bodyText)}` : ""}`;
  } else {
    message = `HTTP ${status}: ${body.error.message}`;
    fields.type = typeof body.error.type === "string" ? body.error.type : undefined;
    fields.code = body.error.code;
    fields.param = body.error.param;
  }
  if (status >= 500) return new SvcServerError(message, status, body, fields);
  const Cls = BY_STATUS[status] ?? (status >= 400 ? SvcClientError : undefined);
  if (Cls) return new Cls(message, status, body, fields);
  return new SvcHttpError(message, status, body, fields);
}

/** E6 `error` event. */
export class AsrError extends SvcStreamEventError {
  override name = "AsrError";
  readonly sessionId: string | undefined;
  constructor(message: string, event: unknown, sessionId: string | undefined, requestId: string | undefined) {
    super(message, event, { requestId, type: "error" });
    this.sessionId = sessionId;
  }
}
