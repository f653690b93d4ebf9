// POST /calls: the body of a request to place a call, validated field by field so that a 400
// names the field and says what was wrong (and the CLI's `dial` sends the same body).
import { MACHINE_DETECTION, type MachineDetection } from "../config/outbound.ts";

export type DialVia = "sip" | "twilio";

/** The wire body of POST /calls (docs/outbound.md). */
export interface DialBody {
  /** A number (E.164 or a local number, `+` kept) or, for SIP, a full sip:/sips: URI. */
  to: string;
  via: DialVia;
  /** Caller id; default outbound.sip.from / outbound.twilio.from. */
  from?: string;
  /** The agent's name; default `default`. */
  agent?: string;
  /** Fills the agent's `{{var.NAME}}` templates (and voicemailMessage's). */
  variables?: Record<string, string>;
  /** 5–120 s, default outbound.ringTimeoutS (30). */
  ringTimeoutS?: number;
  machineDetection?: MachineDetection;
  voicemailMessage?: string;
}

/** POST /calls' 202 answer. */
export interface DialAccepted {
  callId: string;
}

export type ParsedDial = { ok: true; body: DialBody } | { ok: false; field: string; message: string };

const FIELDS = new Set([
  "to",
  "via",
  "from",
  "agent",
  "variables",
  "ringTimeoutS",
  "machineDetection",
  "voicemailMessage",
]);
const NUMBER = /^\+?[0-9*#]{2,32}$/;
const SIP_URI = /^sips?:[^\s<>"]+@[^\s<>"]+$/i;
const VAR_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/** A dialable target: a number (separators dropped, `+` kept) or a SIP URI; undefined when neither. */
export function dialTarget(to: string, via: DialVia): string | undefined {
  const t = to.trim();
  if (via === "sip" && SIP_URI.test(t)) return t;
  const number = t.replace(/[\s().-]/g, "");
  return NUMBER.test(number) ? number : undefined;
}

export function parseDialBody(raw: unknown): ParsedDial {
  const bad = (field: string, message: string): ParsedDial => ({ ok: false, field, message });
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    return bad("body", 'expected a JSON object such as {"to": "+15550100", "via": "sip"}');
  const v = raw as Record<string, unknown>;
  for (const key of Object.keys(v))
    if (!FIELDS.has(key)) return bad(key, `unknown field (expected ${[...FIELDS].join(", ")})`);
  if (v.via !== "sip" && v.via !== "twilio")
    return bad("via", `expected "sip" or "twilio", got ${JSON.stringify(v.via ?? null)}`);
  const via = v.via;
  if (typeof v.to !== "string" || v.to.trim() === "")
    return bad("to", "expected a phone number or (via sip) a SIP URI");
  const to = dialTarget(v.to, via);
  if (!to)
    return bad(
      "to",
      via === "sip"
        ? `expected a phone number (+15550100) or a SIP URI (sip:user@host), got ${JSON.stringify(v.to)}`
        : `expected a phone number such as +15550100, got ${JSON.stringify(v.to)}`,
    );
  const body: DialBody = { to, via };
  if (v.from !== undefined) {
    if (typeof v.from !== "string" || !dialTarget(v.from, via))
      return bad(
        "from",
        `expected a number${via === "sip" ? " or a SIP URI" : ""}, got ${JSON.stringify(v.from)}`,
      );
    body.from = dialTarget(v.from, via)!;
  }
  if (v.agent !== undefined) {
    if (typeof v.agent !== "string" || v.agent.trim() === "") return bad("agent", "expected an agent's name");
    body.agent = v.agent.trim();
  }
  if (v.variables !== undefined) {
    if (typeof v.variables !== "object" || v.variables === null || Array.isArray(v.variables))
      return bad("variables", 'expected an object of names to strings, such as {"name": "Ada"}');
    const vars: Record<string, string> = {};
    for (const [k, value] of Object.entries(v.variables)) {
      if (!VAR_NAME.test(k)) return bad(`variables.${k}`, "expected a name of letters, digits, _ . -");
      if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean")
        return bad(`variables.${k}`, "expected a string, number or boolean");
      vars[k] = String(value);
    }
    body.variables = vars;
  }
  if (v.ringTimeoutS !== undefined) {
    const n = v.ringTimeoutS;
    if (typeof n !== "number" || !Number.isInteger(n) || n < 5 || n > 120)
      return bad("ringTimeoutS", `expected whole seconds from 5 to 120, got ${JSON.stringify(n)}`);
    body.ringTimeoutS = n;
  }
  if (v.machineDetection !== undefined) {
    if (!(MACHINE_DETECTION as readonly unknown[]).includes(v.machineDetection))
      return bad(
        "machineDetection",
        `expected off, hangup or message, got ${JSON.stringify(v.machineDetection)}`,
      );
    body.machineDetection = v.machineDetection as MachineDetection;
  }
  if (v.voicemailMessage !== undefined) {
    if (
      typeof v.voicemailMessage !== "string" ||
      v.voicemailMessage.trim() === "" ||
      v.voicemailMessage.length > 2000
    )
      return bad("voicemailMessage", "expected the words to leave on a voicemail (1–2000 characters)");
    body.voicemailMessage = v.voicemailMessage;
  }
  return { ok: true, body };
}
