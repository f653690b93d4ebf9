// How a receiver knows a report comes from this bridge and is not an old one replayed: an
// HMAC-SHA256, keyed with the shared secret, over the send time and the exact body bytes,
//   X-Voice-Bridge-Signature: sha256=<hex of HMAC-SHA256(secret, "<timestamp>." + body)>
//   X-Voice-Bridge-Timestamp: <timestamp: Unix seconds when this attempt was sent>
// The receiver recomputes it over the raw body (before any JSON parsing), compares in constant
// time and refuses timestamps far from its own clock (docs/data.md, "Call reports", has a snippet).
import { createHmac } from "node:crypto";

export const SIGNATURE_HEADER = "X-Voice-Bridge-Signature";
export const TIMESTAMP_HEADER = "X-Voice-Bridge-Timestamp";
/** The report's id, the same on every attempt: the receiver's de-duplication key. */
export const REPORT_ID_HEADER = "X-Voice-Bridge-Report-Id";

/** The signature header's value for `body` sent at `timestamp` (Unix seconds, as sent). */
export function signReport(secret: string, timestamp: string, body: Uint8Array): string {
  const hmac = createHmac("sha256", secret);
  hmac.update(`${timestamp}.`);
  hmac.update(body);
  return `sha256=${hmac.digest("hex")}`;
}
