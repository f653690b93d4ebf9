// The JSON error body of the HTTP endpoints. The spec does not show it (Errors, item 8); this is the
// OpenAI-compatible shape `{error: {message, type, param?, code?}}` that both sides agree on.
import type { Open, OpenString } from "./common.ts";

/** Conventional values of `error.type`; the client accepts any string. */
export const ERROR_TYPES = [
  "invalid_request_error",
  "authentication_error",
  "permission_error",
  "not_found_error",
  "conflict_error",
  "rate_limit_error",
  "api_error",
  "overloaded_error",
] as const;
export type ErrorType = OpenString<(typeof ERROR_TYPES)[number]>;

export type ErrorObject = Open<{
  message: string;
  type: ErrorType;
  /** Request field the error is about, when there is one. */
  param?: string | null;
  code?: string | number | null;
}>;

export interface ErrorBody {
  error: ErrorObject;
}
