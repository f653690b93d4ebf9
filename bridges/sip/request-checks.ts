// What every request must carry before the stack acts on it (RFC 3261 §8.1.1, §8.2.2), and the
// source marking on its top Via (§18.2.1 `received`, RFC 3581 `rport`) so responses reach the
// real sender through NAT.
import type { SipFlow } from "./flow.ts";
import {
  header,
  headerValues,
  parseCSeq,
  parseNameAddr,
  parseUri,
  parseVia,
  type SipHeader,
  type SipRequest,
} from "./message.ts";

/** Option tags we implement (RFC 4028 session timers). */
export const SUPPORTED_EXTENSIONS: ReadonlySet<string> = new Set(["timer"]);

/** Why a request cannot be handled (answered 400), or undefined. */
export function checkRequest(req: SipRequest): string | undefined {
  const via = headerValues(req, "via")[0];
  if (!via) return "missing Via header";
  if (!parseVia(via)) return "malformed Via header";
  if (!header(req, "call-id")) return "missing Call-ID header";
  const cseq = parseCSeq(header(req, "cseq"));
  if (!cseq) return "missing or malformed CSeq header";
  if (cseq.method !== req.method) return `CSeq method ${cseq.method} does not match ${req.method}`;
  if (!parseNameAddr(header(req, "from") ?? "")) return "missing or malformed From header";
  if (!parseNameAddr(header(req, "to") ?? "")) return "missing or malformed To header";
  if (!parseUri(req.uri)) return `Request-URI "${req.uri.slice(0, 60)}" is not a SIP URI`;
  return undefined;
}

/** Extensions the request Requires that we do not support (answered 420). */
export function unsupportedRequired(req: SipRequest): string[] {
  return headerValues(req, "require")
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s && !SUPPORTED_EXTENSIONS.has(s));
}

/** Writes `received` and `rport` into the top Via (a request already checked to have one). */
export function markSource(req: SipRequest, flow: SipFlow): void {
  const vias = headerValues(req, "via");
  const top = parseVia(vias[0]!)!;
  let value = vias[0]!;
  const rport = top.params.has("rport");
  if (rport) value = value.replace(/;\s*rport(=[^;]*)?/i, `;rport=${flow.remote.port}`);
  if (top.host !== flow.remote.address || rport)
    value = `${value.replace(/;\s*received=[^;]*/i, "")};received=${flow.remote.address}`;
  const rest: SipHeader[] = vias.slice(1).map((v) => ({ name: "via", value: v }));
  const first = req.headers.findIndex((h) => h.name === "via");
  req.headers = req.headers.filter((h) => h.name !== "via");
  req.headers.splice(first, 0, { name: "via", value }, ...rest);
}
