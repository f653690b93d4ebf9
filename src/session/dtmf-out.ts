// The agent's keypad: the send_dtmf tool the model presses phone menus with, and the sending of its
// digits on whatever the call's transport offers (transport.ts, DtmfOut): tones in the outbound
// audio, or the transport's own signal (SIP's RFC 4733 events or INFO). A `w` waits half a second,
// as on a phone's dialer, for menus that need a moment between keys. The digits go after the
// agent's words (call-control.ts runs them once the reply is heard), one after the other.
import { DTMF_WAIT_MS, dtmfTones } from "../../codecs/dtmf-tones.ts";
import type { ChatTool } from "../api/types/index.ts";
import type { Clock } from "../core/clock.ts";
import type { CallTransport } from "./transport.ts";

/** How long each key sounds, and the silence after it, ms (Q.24 asks ≥ 40; receivers are sure of ≥ 65). */
export const KEY_TONE_MS = 100;
export const KEY_GAP_MS = 100;
/** Most keys one call of the tool may press (an account number and a few waits). */
export const MAX_KEYS = 40;

export const SEND_DTMF_NAME = "send_dtmf";

export const SEND_DTMF: ChatTool = {
  type: "function",
  function: {
    name: SEND_DTMF_NAME,
    description:
      'Press keys on the phone\'s keypad, as a person would to answer a phone menu ("press 1 for sales") or enter a number it asks for. The keys are pressed once you have finished speaking.',
    parameters: {
      type: "object",
      properties: {
        digits: {
          type: "string",
          description: "the keys, in order: 0-9, *, #, A-D; w waits half a second between keys",
        },
      },
      required: ["digits"],
    },
  },
};

/** The keys as given (letters A-D in capitals), or an error naming what is wrong with them. */
export function checkDigits(raw: unknown): { digits: string } | { error: string } {
  if (typeof raw !== "string" || raw.trim() === "")
    return { error: 'digits: give the keys to press, e.g. "1" or "1234#"' };
  const digits = raw
    .replace(/[\s-]/g, "")
    .replace(/[a-d]/g, (c) => c.toUpperCase())
    .replace(/W/g, "w");
  const bad = /[^0-9*#A-Dw]/.exec(digits);
  if (bad) return { error: `digits: "${bad[0]}" is not a key (0-9, *, #, A-D, and w to wait)` };
  if (digits.replace(/w/g, "").length === 0) return { error: "digits: no key to press, only waits" };
  if (digits.length > MAX_KEYS) return { error: `digits: at most ${MAX_KEYS} keys at once` };
  return { digits };
}

/**
 * Sends checked `digits` on the call and resolves once they are out (heard, for tones). Rejects
 * with the transport's reason when it cannot carry them, or fails mid-way.
 */
export async function sendDigits(transport: CallTransport, clock: Clock, digits: string): Promise<void> {
  const out = transport.dtmfOut;
  if (!out) throw new Error(`a ${transport.info.transport} call carries no keypad digits`);
  if (out.kind === "tones") {
    if (transport.output.kind !== "pcm") throw new Error("tones need a PCM output");
    transport.play(dtmfTones(digits, transport.output.rate, { toneMs: KEY_TONE_MS, gapMs: KEY_GAP_MS }));
    await playedTo(transport, clock, transport.queuedMs());
    return;
  }
  for (const key of digits) {
    if (key === "w") await sleep(clock, DTMF_WAIT_MS);
    else {
      await out.send(key, KEY_TONE_MS);
      await sleep(clock, KEY_GAP_MS);
    }
  }
}

function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimeout(resolve, ms));
}

/**
 * Resolves once the caller has heard the outbound audio up to `endMs`, or it was cleared unheard,
 * or the playout stopped moving (the call ended): a second past when it should have been heard.
 */
async function playedTo(transport: CallTransport, clock: Clock, endMs: number): Promise<void> {
  const giveUpAt = clock.now() + (endMs - transport.playedMs()) + 1000;
  // Read every 20 ms, a frame: the transport reports its playout to the session, not to us.
  while (transport.playedMs() < endMs - 1 && transport.queuedMs() >= endMs - 1 && clock.now() < giveUpAt)
    await sleep(clock, 20);
}
