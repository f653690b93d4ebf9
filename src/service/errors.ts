// HTTP errors of the local service: one class, one JSON body shape ({"error":{message,type,param,code}}),
// one status per kind. Route code throws ApiError; the server's error handler renders it. Errors after
// a stream has started are not HTTP errors: each renderer sends its format's in-band error event.
import type { ErrorBody } from "../api/types/index.ts";

const TYPE_BY_STATUS: Readonly<Record<number, string>> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "invalid_request_error",
  422: "invalid_request_error",
  429: "rate_limit_error",
  500: "api_error",
  502: "api_error",
  503: "overloaded_error",
};

export interface ApiErrorOptions {
  /** The request field at fault (dotted path, e.g. `messages[2].content`), when there is one. */
  param?: string | null;
  /** A stable machine-readable code, e.g. `invalid_value`, `model_not_found`. */
  code?: string | null;
  type?: string;
}

export class ApiError extends Error {
  override name = "ApiError";
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  readonly code: string | null;

  constructor(status: number, message: string, opts: ApiErrorOptions = {}) {
    super(message);
    this.status = status;
    this.type =
      opts.type ?? TYPE_BY_STATUS[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
    this.param = opts.param ?? null;
    this.code = opts.code ?? null;
  }

  toBody(): ErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** 400: a parameter is missing, of the wrong type, or outside its documented range or set. */
export function badParam(param: string, message: string, code = "invalid_value"): ApiError {
  return new ApiError(400, `${param}: ${message}`, { param, code });
}

export function missingParam(param: string, what: string): ApiError {
  return new ApiError(400, `${param} is required: ${what}`, { param, code: "missing_required_parameter" });
}

/** 422: well-formed JSON and parameters, but content the service cannot use (e.g. bytes that are no image). */
export function unusable(param: string, message: string, code = "unprocessable_content"): ApiError {
  return new ApiError(422, `${param}: ${message}`, { param, code });
}

export function notFound(message: string, param: string | null = null, code = "not_found"): ApiError {
  return new ApiError(404, message, { param, code });
}

export function unauthorized(message: string): ApiError {
  return new ApiError(401, message, { code: "invalid_api_key" });
}

export function tooLarge(message: string, param: string | null = null): ApiError {
  return new ApiError(413, message, { param, code: "request_too_large" });
}

export function tooMany(message: string, code = "rate_limit_exceeded"): ApiError {
  return new ApiError(429, message, { code });
}

export function internal(message: string, code = "internal_error"): ApiError {
  return new ApiError(500, message, { code });
}

/** Maps any thrown value (fastify's own errors included) to an ApiError. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as { statusCode?: number; code?: string; message?: string; name?: string } | undefined;
  const code = e?.code;
  switch (code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
    case "FST_REQ_FILE_TOO_LARGE":
      return tooLarge(`request body too large: ${e?.message ?? ""}`.trim());
    case "FST_ERR_CTP_INVALID_JSON_BODY":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new ApiError(400, `request body is not valid JSON: ${e?.message ?? ""}`, {
        code: "invalid_json",
      });
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new ApiError(
        400,
        "unsupported Content-Type: send application/json (multipart/form-data for file uploads)",
        { code: "invalid_content_type" },
      );
    case "FST_ERR_CTP_EMPTY_TYPE":
      return new ApiError(400, "missing Content-Type header", { code: "invalid_content_type" });
    case "FST_INVALID_MULTIPART_CONTENT_TYPE":
      return new ApiError(400, "the request is not multipart/form-data", { code: "invalid_content_type" });
  }
  if (e?.name === "SyntaxError") {
    return new ApiError(400, `request body is not valid JSON: ${e.message}`, { code: "invalid_json" });
  }
  const status = e?.statusCode;
  if (typeof status === "number" && status >= 400 && status < 500) {
    return new ApiError(status, e?.message ?? "bad request", { code: code ?? null });
  }
  return internal(`internal error: ${e?.message ?? String(err)}`);
}
