// What went wrong with one request to the service, in the terms the call's recovery decides on
// (retry, fall back, give up) and the operator reads in the metrics. The adapters turn the
// client's errors into ServiceFailure (app/bridge/svc-adapters.ts); anything else is read by its
// `status`, the way every HTTP error of ours and of other clients carries it.

/** How a request failed: a metric label (`voice_bridge_service_failures_total{kind}`). */
export type FailureKind =
  | "status_503"
  | "status_429"
  | "status_5xx"
  /** No answer, or no first chunk, within the deadline (and 408). */
  | "timeout"
  /** A stream went quiet for longer than its gap deadline. */
  | "stall"
  /** A WebSocket session closed before it finished. */
  | "closed"
  /** The connection failed or broke off mid-stream. */
  | "connection"
  /** A 4xx other than 408/429: the same request would be refused again. */
  | "refused"
  /** An error event inside an answer that had started well. */
  | "error_event"
  | "other";

/** A failed request to the service, as the recovery reads it. */
export class ServiceFailure extends Error {
  override name = "ServiceFailure";
  readonly kind: FailureKind;
  /** What the service asked to wait before a retry (`retry-after`), ms. */
  readonly retryAfterMs: number | undefined;
  readonly status: number | undefined;

  constructor(
    message: string,
    kind: FailureKind,
    opts: { retryAfterMs?: number | undefined; status?: number | undefined; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.kind = kind;
    this.retryAfterMs = opts.retryAfterMs;
    this.status = opts.status;
  }
}

/** The kind of an HTTP status the service answered with. */
export function kindOfStatus(status: number): FailureKind {
  if (status === 503) return "status_503";
  if (status === 429) return "status_429";
  if (status === 408) return "timeout";
  if (status >= 500) return "status_5xx";
  if (status >= 400) return "refused";
  return "other";
}

/** How `err` failed: a ServiceFailure's own kind, else by its status. */
export function failureKind(err: unknown): FailureKind {
  if (err instanceof ServiceFailure) return err.kind;
  const status = (err as { status?: unknown } | undefined)?.status;
  return typeof status === "number" ? kindOfStatus(status) : "other";
}

/** The service refused the request as such: sending it again to the same place gets the same answer. */
export function isRefused(err: unknown): boolean {
  return failureKind(err) === "refused";
}

/** The wait the service asked for before a retry, ms (undefined: none asked). */
export function retryAfterOf(err: unknown): number | undefined {
  return err instanceof ServiceFailure ? err.retryAfterMs : undefined;
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
