// What the bridge's own log says each call received, for the inbound part of dropped_frames in
// `npm run bench -- calls`: per call, the 20 ms frames its transport delivered to the session and
// the gaps it saw in the caller's stream. Each transport logs that once, when the call ends:
//   twilio: "call ended" with callSid, inFrames, inGaps (media timestamp gaps)
//   sip:    "RTP media ended" with callId (the SIP Call-ID), rx.frames, jitter.lost (sequence
//           numbers that never came, concealed by the receiver)
import type { BridgeCallEnd } from "./calls-summary.ts";

export type BenchTransport = "twilio" | "sip";

interface TwilioEnd {
  callSid?: unknown;
  inFrames?: unknown;
  inGaps?: unknown;
}

interface SipEnd {
  msg?: unknown;
  callId?: unknown;
  rx?: { frames?: unknown };
  jitter?: { lost?: unknown };
}

/** The per-call records of a bridge log (JSON lines); lines that are not such records are skipped. */
export function bridgeCallEnds(log: string, transport: BenchTransport): Map<string, BridgeCallEnd> {
  const marker = transport === "twilio" ? '"inFrames"' : '"RTP media ended"';
  const ends = new Map<string, BridgeCallEnd>();
  for (const line of log.split("\n")) {
    if (!line.includes(marker)) continue;
    let e: unknown;
    try {
      e = JSON.parse(line);
    } catch {
      continue; // not a JSON log line
    }
    if (typeof e !== "object" || e === null) continue;
    const rec = transport === "twilio" ? twilioEnd(e as TwilioEnd) : sipEnd(e as SipEnd);
    if (rec) ends.set(rec[0], rec[1]);
  }
  return ends;
}

function twilioEnd(e: TwilioEnd): [string, BridgeCallEnd] | undefined {
  if (typeof e.callSid !== "string" || !e.callSid || typeof e.inFrames !== "number") return undefined;
  return [e.callSid, { inFrames: e.inFrames, inGaps: typeof e.inGaps === "number" ? e.inGaps : 0 }];
}

function sipEnd(e: SipEnd): [string, BridgeCallEnd] | undefined {
  if (e.msg !== "RTP media ended" || typeof e.callId !== "string" || !e.callId) return undefined;
  const frames = e.rx?.frames;
  if (typeof frames !== "number") return undefined;
  const lost = e.jitter?.lost;
  return [e.callId, { inFrames: frames, inGaps: typeof lost === "number" ? lost : 0 }];
}
