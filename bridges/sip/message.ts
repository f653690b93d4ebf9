// SIP messages as the rest of the stack sees them: a start line, headers kept in arrival order
// under their full lower-case names (compact forms expanded at parse time), and a raw body.

export interface SipHeader {
  /** Full lower-case name: `via`, `call-id`, … (compact forms such as `i` are expanded). */
  readonly name: string;
  readonly value: string;
}

interface SipBase {
  headers: SipHeader[];
  body: Buffer;
}

export interface SipRequest extends SipBase {
  readonly kind: "request";
  readonly method: string;
  readonly uri: string;
}

export interface SipResponse extends SipBase {
  readonly kind: "response";
  readonly status: number;
  readonly reason: string;
}

export type SipMessage = SipRequest | SipResponse;

/** RFC 3261 §7.3.3 and the extensions' compact forms (RFC 3515 r, RFC 3891/4028 x …). */
export const COMPACT_FORMS: Readonly<Record<string, string>> = {
  a: "accept-contact",
  b: "referred-by",
  c: "content-type",
  d: "request-disposition",
  e: "content-encoding",
  f: "from",
  i: "call-id",
  j: "reject-contact",
  k: "supported",
  l: "content-length",
  m: "contact",
  o: "event",
  r: "refer-to",
  s: "subject",
  t: "to",
  u: "allow-events",
  v: "via",
  x: "session-expires",
  y: "identity",
};

/** Headers whose comma-separated values are separate entries (RFC 3261 §7.3.1). */
const LIST_HEADERS = new Set(["via", "route", "record-route", "contact", "allow", "supported", "require"]);

/** First value of a header, or undefined. */
export function header(msg: SipBase, name: string): string | undefined {
  for (const h of msg.headers) if (h.name === name) return h.value;
  return undefined;
}

/**
 * A header's value without its `;` parameters, trimmed and lower-cased, "" when absent: the media
 * type of a Content-Type, the package of an Event.
 */
export function bareValue(value: string | undefined): string {
  return (value ?? "").split(";")[0]!.trim().toLowerCase();
}

/** Every value of a header in order, comma-separated lists split (for Via, Route, Contact …). */
export function headerValues(msg: SipBase, name: string): string[] {
  const out: string[] = [];
  for (const h of msg.headers) {
    if (h.name !== name) continue;
    if (LIST_HEADERS.has(name)) out.push(...splitList(h.value));
    else out.push(h.value);
  }
  return out;
}

/** Splits a header value at commas outside quotes and angle brackets. */
export function splitList(value: string): string[] {
  const out: string[] = [];
  let quoted = false;
  let angle = false;
  let start = 0;
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    if (ch === '"' && value[i - 1] !== "\\") quoted = !quoted;
    else if (!quoted && ch === "<") angle = true;
    else if (!quoted && ch === ">") angle = false;
    else if (!quoted && !angle && ch === ",") {
      const part = value.slice(start, i).trim();
      if (part) out.push(part);
      start = i + 1;
    }
  }
  const last = value.slice(start).trim();
  if (last) out.push(last);
  return out;
}

/** `;name=value` parameters after the first `;` (outside quotes), names lower-cased; flags map to "". */
export function params(value: string): Map<string, string> {
  const out = new Map<string, string>();
  const semi = paramStart(value);
  if (semi < 0) return out;
  for (const part of value.slice(semi + 1).split(";")) {
    const eq = part.indexOf("=");
    const name = (eq < 0 ? part : part.slice(0, eq)).trim().toLowerCase();
    if (name)
      out.set(
        name,
        eq < 0
          ? ""
          : part
              .slice(eq + 1)
              .trim()
              .replace(/^"(.*)"$/, "$1"),
      );
  }
  return out;
}

function paramStart(value: string): number {
  // Parameters of a name-addr start after the closing '>'; of an addr-spec, at the first ';'.
  const close = value.lastIndexOf(">");
  let quoted = false;
  for (let i = close < 0 ? 0 : close; i < value.length; i++) {
    const ch = value[i];
    if (ch === '"') quoted = !quoted;
    else if (ch === ";" && !quoted) return i;
  }
  return -1;
}

export interface NameAddr {
  readonly display?: string;
  /** The URI without its angle brackets. */
  readonly uri: string;
  readonly tag?: string;
}

/** Parses From/To/Contact/Refer-To: `"Name" <sip:u@h;p>;tag=x` or `sip:u@h;tag=x`. */
export function parseNameAddr(value: string): NameAddr | undefined {
  const lt = value.indexOf("<");
  let uri: string;
  let display: string | undefined;
  if (lt >= 0) {
    const gt = value.indexOf(">", lt);
    if (gt < 0) return undefined;
    uri = value.slice(lt + 1, gt).trim();
    const d = value
      .slice(0, lt)
      .trim()
      .replace(/^"(.*)"$/, "$1");
    if (d) display = d;
  } else {
    const semi = value.indexOf(";");
    uri = (semi < 0 ? value : value.slice(0, semi)).trim();
  }
  if (!/^[a-z][a-z0-9+.-]*:\S+$/i.test(uri)) return undefined;
  const tag = params(value).get("tag");
  return { uri, ...(display ? { display } : {}), ...(tag ? { tag } : {}) };
}

export interface SipUri {
  readonly scheme: string;
  readonly user?: string;
  readonly host: string;
  readonly port?: number;
}

/** The parts of a sip:/sips:/tel: URI the stack needs (user, host, port). */
export function parseUri(uri: string): SipUri | undefined {
  const m = /^(sips?|tel):(?:([^@;?]+)@)?(\[[^\]]+\]|[^:;?>]+)(?::(\d{1,5}))?/i.exec(uri.trim());
  if (!m) return undefined;
  const scheme = m[1]!.toLowerCase();
  if (scheme === "tel") return { scheme, user: m[3]!, host: "" };
  return {
    scheme,
    host: m[3]!,
    ...(m[2] ? { user: decodeURIComponent(m[2].split(":")[0]!) } : {}),
    ...(m[4] ? { port: Number(m[4]) } : {}),
  };
}

export interface Via {
  readonly transport: string;
  readonly host: string;
  readonly port?: number;
  readonly branch?: string;
  readonly params: Map<string, string>;
}

/** `SIP/2.0/UDP host:port;branch=…;rport` */
export function parseVia(value: string): Via | undefined {
  const m = /^SIP\s*\/\s*2\.0\s*\/\s*([A-Za-z]+)\s+(\[[^\]]+\]|[^\s:;]+)(?:\s*:\s*(\d{1,5}))?/i.exec(
    value.trim(),
  );
  if (!m) return undefined;
  const p = params(value);
  const branch = p.get("branch");
  return {
    transport: m[1]!.toUpperCase(),
    host: m[2]!,
    ...(m[3] ? { port: Number(m[3]) } : {}),
    ...(branch ? { branch } : {}),
    params: p,
  };
}

export interface CSeq {
  readonly seq: number;
  readonly method: string;
}

export function parseCSeq(value: string | undefined): CSeq | undefined {
  const m = value ? /^\s*(\d{1,10})\s+([A-Za-z!%*_+`'~.-]+)\s*$/.exec(value) : null;
  if (!m) return undefined;
  const seq = Number(m[1]);
  return seq < 2 ** 31 ? { seq, method: m[2]!.toUpperCase() } : undefined;
}
