// The browser call's WebSocket (WS /browser/call): the one definition of its messages, used by
// the bridge and the tests; the console's page (console/phone.js) speaks it too.
//
// Binary messages carry audio both ways: mono 16-bit little-endian PCM at 16 kHz. The page sends
// its microphone in 20 ms frames; the bridge sends the agent's voice paced a little ahead of the
// page's playout. Text messages are JSON objects with a `type`, below.
//
// Playout position: the page counts the agent audio it has played and reports it (`played`), the
// way Twilio echoes marks. Each `clear` opens a new epoch: the page drops its queue at once and
// counts again from 0, and reports of an older epoch are ignored, so audio played between the
// bridge's clear and the page receiving it is never counted as heard.

export const BROWSER_CALL_PATH = "/browser/call";
export const BROWSER_RATE = 16000;
export const BROWSER_FRAME_MS = 20;

/** Bridge → page. */
export type BrowserServerMessage =
  /** The call is set up: send audio now. */
  | { type: "ready"; callId: string; sampleRate: number; frameMs: number }
  /** Drop every queued sample now (barge-in); count played audio from 0 under `epoch`. */
  | { type: "clear"; epoch: number }
  /** The agent ended the call; the socket closes next. */
  | { type: "hangup"; reason: string }
  /** A message of the page's was refused: which field, and why. */
  | { type: "error"; message: string };

/** Page → bridge. */
export type BrowserClientMessage =
  /** Agent audio played, ms, since the clear that opened `epoch` (epoch 0: since the call began). */
  | { type: "played"; epoch: number; ms: number }
  /** A keypad digit. */
  | { type: "dtmf"; digit: string }
  /** The person hung up (closing the socket says the same). */
  | { type: "hangup" };

export type ParsedClientMessage =
  | { ok: true; message: BrowserClientMessage }
  | { ok: false; problem: string };

const DTMF = /^[0-9*#A-D]$/;

/** Reads one text message from the page, or says which field is wrong and how. */
export function parseClientMessage(text: string): ParsedClientMessage {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return { ok: false, problem: "not JSON: text messages are JSON objects with a type" };
  }
  if (typeof v !== "object" || v === null || Array.isArray(v))
    return { ok: false, problem: "expected a JSON object with a type" };
  const m = v as Record<string, unknown>;
  switch (m.type) {
    case "played": {
      const { epoch, ms } = m;
      if (typeof epoch !== "number" || !Number.isInteger(epoch) || epoch < 0)
        return {
          ok: false,
          problem: `played.epoch: expected a whole number ≥ 0, got ${JSON.stringify(epoch)}`,
        };
      if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0)
        return { ok: false, problem: `played.ms: expected a number of ms ≥ 0, got ${JSON.stringify(ms)}` };
      return { ok: true, message: { type: "played", epoch, ms } };
    }
    case "dtmf":
      if (typeof m.digit !== "string" || !DTMF.test(m.digit))
        return {
          ok: false,
          problem: `dtmf.digit: expected one of 0-9 * # A-D, got ${JSON.stringify(m.digit)}`,
        };
      return { ok: true, message: { type: "dtmf", digit: m.digit } };
    case "hangup":
      return { ok: true, message: { type: "hangup" } };
    default:
      return {
        ok: false,
        problem: `type: expected played, dtmf or hangup, got ${JSON.stringify(m.type)}`,
      };
  }
}
