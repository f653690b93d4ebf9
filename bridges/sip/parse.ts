// Parsing SIP from bytes (RFC 3261 §7): start line, folded headers, compact names, Content-Length
// framing. Never throws: bad input comes back as an error, with the request parsed so far when
// there is one, so the server can still answer 400 to it.
import { COMPACT_FORMS, type SipHeader, type SipMessage, type SipRequest } from "./message.ts";

/** Largest message accepted, headers and body (a UDP datagram's upper bound). */
export const MAX_MESSAGE_BYTES = 65_535;

export type ParseResult =
  | { readonly ok: true; readonly msg: SipMessage }
  | { readonly ok: false; readonly error: string; readonly partial?: SipRequest };

const TOKEN = /^[A-Za-z0-9!%*_+`'~.-]+$/;
const REQUEST_LINE = /^([A-Za-z0-9!%*_+`'~.-]+) (\S+) SIP\/2\.0$/;
const STATUS_LINE = /^SIP\/2\.0 ([1-6]\d\d) ?(.*)$/;
// Anything but TAB among C0 controls, and DEL: binary junk, not header text.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/;

/** Offset of the blank line ending the headers and its length, or undefined. */
export function headerEnd(buf: Buffer, from = 0): { at: number; len: number } | undefined {
  const crlf = buf.indexOf("\r\n\r\n", from);
  const lf = buf.indexOf("\n\n", from);
  if (crlf >= 0 && (lf < 0 || crlf < lf)) return { at: crlf, len: 4 };
  if (lf >= 0) return { at: lf, len: 2 };
  return undefined;
}

/** Parses one whole message (a datagram, or a frame cut from a TCP stream). */
export function parseMessage(buf: Buffer): ParseResult {
  if (buf.length > MAX_MESSAGE_BYTES)
    return { ok: false, error: `message of ${buf.length} bytes is too large` };
  const end = headerEnd(buf);
  const head = buf.toString("utf8", 0, end ? end.at : buf.length);
  const lines = unfold(head.split(/\r?\n/));
  const start = lines.shift() ?? "";
  const req = REQUEST_LINE.exec(start);
  const res = req ? null : STATUS_LINE.exec(start);
  if (!req && !res) return { ok: false, error: "no SIP request or status line" };

  const headers: SipHeader[] = [];
  const partial = (): SipRequest | undefined =>
    req
      ? { kind: "request", method: req[1]!.toUpperCase(), uri: req[2]!, headers, body: Buffer.alloc(0) }
      : undefined;
  const fail = (error: string): ParseResult => {
    const p = partial();
    return p ? { ok: false, error, partial: p } : { ok: false, error };
  };

  for (const line of lines) {
    const colon = line.indexOf(":");
    const name = colon > 0 ? line.slice(0, colon).trim() : "";
    if (!TOKEN.test(name)) return fail(`malformed header line "${clip(line)}"`);
    if (CONTROL.test(line)) return fail(`control characters in header ${name}`);
    const lower = name.toLowerCase();
    headers.push({ name: COMPACT_FORMS[lower] ?? lower, value: line.slice(colon + 1).trim() });
  }
  if (!end) return fail("no blank line after the headers");

  const bodyStart = end.at + end.len;
  const available = buf.length - bodyStart;
  let bodyLen = available;
  const cl = headers.find((h) => h.name === "content-length")?.value;
  if (cl !== undefined) {
    if (!/^\d{1,10}$/.test(cl)) return fail(`Content-Length "${clip(cl)}" is not a number`);
    bodyLen = Number(cl);
    if (bodyLen > available) return fail(`Content-Length ${bodyLen} exceeds the ${available} bytes of body`);
  }
  const body = buf.subarray(bodyStart, bodyStart + bodyLen);
  const msg: SipMessage = req
    ? { kind: "request", method: req[1]!.toUpperCase(), uri: req[2]!, headers, body }
    : { kind: "response", status: Number(res![1]), reason: res![2]!, headers, body };
  return { ok: true, msg };
}

/** Joins continuation lines (leading SP/HT) onto the header they continue (RFC 3261 §7.3.1). */
function unfold(lines: string[]): string[] {
  const out: string[] = [];
  for (const line of lines) {
    if ((line.startsWith(" ") || line.startsWith("\t")) && out.length > 1)
      out[out.length - 1] += ` ${line.trim()}`;
    else if (line !== "") out.push(line);
  }
  return out;
}

function clip(s: string): string {
  return s.length > 40 ? `${s.slice(0, 40)}…` : s;
}
