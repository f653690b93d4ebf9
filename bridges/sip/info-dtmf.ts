// Keypad digits sent as SIP INFO, the legacy way many PBXs and trunks still relay DTMF when RTP
// telephone-events are not negotiated: `application/dtmf-relay` (Cisco's, `Signal=5\r\nDuration=160`)
// or `application/dtmf` (the bare digit). Both may name * and # as 10 and 11.
import { bareValue } from "./message.ts";

export const INFO_DTMF_TYPES = ["application/dtmf-relay", "application/dtmf"] as const;

const DIGITS = /^[0-9*#A-D]$/;

/** What an INFO body says: a digit, not a keypad INFO at all, or a keypad INFO we cannot read. */
export type InfoDtmf = { digit: string } | { notDtmf: true } | { error: string };

export function parseInfoDtmf(contentType: string | undefined, body: string): InfoDtmf {
  const type = bareValue(contentType);
  if (type === "application/dtmf-relay") {
    const signal = body
      .split(/\r?\n/)
      .map((line) => /^\s*signal\s*=\s*(\S+)\s*$/i.exec(line)?.[1])
      .find((v) => v !== undefined);
    if (signal === undefined) return { error: "application/dtmf-relay body has no Signal= line" };
    return digitOf(signal);
  }
  if (type === "application/dtmf") return digitOf(body.trim());
  return { notDtmf: true };
}

function digitOf(signal: string): InfoDtmf {
  const s = signal === "10" ? "*" : signal === "11" ? "#" : signal.toUpperCase();
  if (!DIGITS.test(s)) return { error: `not a keypad digit: ${JSON.stringify(signal.slice(0, 16))}` };
  return { digit: s };
}

/** The body of an INFO that sends one digit: Cisco's relay format, which PBXs and trunks read. */
export function dtmfRelayBody(digit: string, durationMs: number): string {
  if (!DIGITS.test(digit)) throw new RangeError(`not a keypad digit: ${JSON.stringify(digit)}`);
  return `Signal=${digit}\r\nDuration=${Math.round(durationMs)}\r\n`;
}
