// Writing SIP: messages to bytes (Content-Length always computed, never trusted from the caller)
// and responses built from the request they answer (RFC 3261 §8.2.6).
import { randomBytes } from "node:crypto";
import {
  header,
  headerValues,
  type SipHeader,
  type SipMessage,
  type SipRequest,
  type SipResponse,
} from "./message.ts";

const REASONS: Readonly<Record<number, string>> = {
  100: "Trying",
  180: "Ringing",
  200: "OK",
  202: "Accepted",
  400: "Bad Request",
  405: "Method Not Allowed",
  408: "Request Timeout",
  415: "Unsupported Media Type",
  420: "Bad Extension",
  422: "Session Interval Too Small",
  481: "Call/Transaction Does Not Exist",
  486: "Busy Here",
  487: "Request Terminated",
  488: "Not Acceptable Here",
  491: "Request Pending",
  500: "Server Internal Error",
  503: "Service Unavailable",
};

const SPELLING: Readonly<Record<string, string>> = {
  "call-id": "Call-ID",
  cseq: "CSeq",
  "www-authenticate": "WWW-Authenticate",
  "mime-version": "MIME-Version",
};

function spell(name: string): string {
  return (
    SPELLING[name] ?? name.replace(/(^|-)([a-z])/g, (_, dash: string, ch: string) => dash + ch.toUpperCase())
  );
}

export function serialize(msg: SipMessage): Buffer {
  let text =
    msg.kind === "request"
      ? `${msg.method} ${msg.uri} SIP/2.0\r\n`
      : `SIP/2.0 ${msg.status} ${msg.reason}\r\n`;
  for (const h of msg.headers) if (h.name !== "content-length") text += `${spell(h.name)}: ${h.value}\r\n`;
  text += `Content-Length: ${msg.body.length}\r\n\r\n`;
  const head = Buffer.from(text, "utf8");
  return msg.body.length === 0 ? head : Buffer.concat([head, msg.body]);
}

export interface ResponseExtras {
  /** Added to To when it has no tag yet (the dialog's local tag). */
  toTag?: string;
  headers?: SipHeader[];
  body?: { type: string; content: Buffer | string };
  reason?: string;
}

/** A response to `req`: its Via, From, To, Call-ID and CSeq copied, then `extras`. */
export function makeResponse(req: SipRequest, status: number, extras: ResponseExtras = {}): SipResponse {
  const headers: SipHeader[] = [];
  for (const v of headerValues(req, "via")) headers.push({ name: "via", value: v });
  for (const name of ["from", "to", "call-id", "cseq"]) {
    let value = header(req, name);
    if (value === undefined) continue;
    if (name === "to" && extras.toTag && !/;\s*tag=/i.test(value)) value += `;tag=${extras.toTag}`;
    headers.push({ name, value });
  }
  headers.push(...(extras.headers ?? []));
  let body: Buffer = Buffer.alloc(0);
  if (extras.body) {
    headers.push({ name: "content-type", value: extras.body.type });
    body = typeof extras.body.content === "string" ? Buffer.from(extras.body.content) : extras.body.content;
  }
  return { kind: "response", status, reason: extras.reason ?? REASONS[status] ?? "Unknown", headers, body };
}

/** A random token for tags and Via branches (branches get the RFC 3261 magic cookie). */
export function randomToken(bytes = 8): string {
  return randomBytes(bytes).toString("hex");
}

export function newBranch(): string {
  return `z9hG4bK${randomToken()}`;
}
