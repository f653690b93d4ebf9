// The library's way to place a call: the same request as POST /calls (one wire type, DialBody),
// checked and placed by the same code; a refusal is a DialError carrying what the HTTP route
// would have answered (status, the field at fault, when to retry).
import type { OutboundCalls } from "../../src/outbound/calls.ts";
import type { DialAccepted, DialBody } from "../../src/outbound/request.ts";

/** A call the bridge would not place: a bad field (400), a do-not-call number (403), over the limits (429), or shutting down (503). */
export class DialError extends Error {
  override readonly name = "DialError";
  /** The status POST /calls answers for the same refusal. */
  readonly status: 400 | 403 | 429 | 503;
  /** The request's field at fault (`to`, `via`, `agent`, `variables.name`...), when one is. */
  readonly field: string | undefined;
  /** Over the limits or draining: seconds to wait before trying again. */
  readonly retryAfterS: number | undefined;

  constructor(status: 400 | 403 | 429 | 503, message: string, field?: string, retryAfterS?: number) {
    super(field ? `${field}: ${message}` : message);
    this.status = status;
    this.field = field;
    this.retryAfterS = retryAfterS;
  }
}

/** Places `request` as POST /calls would; resolves once the call's record exists (it rings on). */
export async function dial(calls: OutboundCalls, request: DialBody): Promise<DialAccepted> {
  const placed = calls.request(request);
  if (!placed.ok) throw new DialError(placed.status, placed.message, placed.field, placed.retryAfterS);
  return { callId: placed.callId };
}
