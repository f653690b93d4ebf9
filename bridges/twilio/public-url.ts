// The URLs Twilio uses to reach the bridge: they go into the TwiML, and Twilio signs
// requests with them, so signature checks must rebuild them exactly. They come from
// server.publicUrl when set, else from the request itself (Host, X-Forwarded-Proto).
import type { IncomingHttpHeaders } from "node:http";
import twilio from "twilio";

export interface PublicBase {
  /** e.g. https://bridge.example.com (no trailing slash). */
  readonly base: string;
  /** True when it came from the request's headers rather than configuration. */
  readonly derived: boolean;
}

function first(h: string | string[] | undefined): string | undefined {
  const v = Array.isArray(h) ? h[0] : h;
  return v?.split(",")[0]?.trim() || undefined;
}

/** The public http(s) base of the bridge as seen by the caller of this request. */
export function publicBase(
  configured: string | undefined,
  headers: IncomingHttpHeaders,
  encrypted: boolean,
): PublicBase {
  if (configured) return { base: configured.replace(/\/+$/, ""), derived: false };
  const proto = first(headers["x-forwarded-proto"])?.toLowerCase() ?? (encrypted ? "https" : "http");
  const host = first(headers.host) ?? "localhost";
  const scheme = proto === "https" || proto === "wss" ? "https" : "http";
  return { base: `${scheme}://${host}`, derived: true };
}

/** https://x → wss://x, http://x → ws://x. */
export function wsBase(httpBase: string): string {
  return httpBase.replace(/^http(s?):/i, (_m, s: string) => `ws${s}:`);
}

/** Checks X-Twilio-Signature for `url` and the request's POST parameters (none for the WebSocket upgrade). */
export function signatureValid(
  authToken: string,
  header: string | string[] | undefined,
  url: string,
  params: Record<string, string>,
): boolean {
  const signature = Array.isArray(header) ? header[0] : header;
  if (!signature) return false;
  return twilio.validateRequest(authToken, signature, url, params);
}
