// The SIP load generator's calls: placeSipCall (sip-uac.ts) at the start times given, each
// speaking the shared caller timeline, reported in the shape of the Twilio load generator's
// CallReport so that calls-summary.ts reads both. RTP lateness is measured against each
// packet's timestamp (rtp-lateness.ts) rather than the Twilio frame model; holes in the agent's
// stream are timestamps skipping ahead (20 ms slots); a SIP call has no clears.
import type { CallReport, TurnFigures } from "./calls-load.ts";
import { placeSipCall, type SipCallReport } from "./sip-uac.ts";

export interface SipLoadSpec {
  /** The bridge's SIP address. */
  target: { address: string; port: number };
  /** The bridge's HTTP base URL, to read each call's turns (GET /calls/{Call-ID}); optional. */
  url?: string;
  /** The bridge's token, for GET /calls/{Call-ID}. */
  bridgeToken?: string | undefined;
  /** Raw little-endian Int16 mono 8 kHz: what every caller says. */
  timelinePath: string;
  seconds: number;
  /** Epoch ms each call starts at. */
  startsAtMs: number[];
  /** Measuring window, epoch ms. */
  windowMs: [number, number];
  codec?: "pcmu" | "pcma";
  /** SDES-SRTP calls. */
  srtp?: boolean;
  /** SIP over TLS to `target` (the bridge's TLS port). */
  tls?: boolean;
}

const round2 = (v: number) => Math.round(v * 100) / 100;

/**
 * The caller's RTP stops this long before its BYE. The BYE travels on another socket, so sent
 * together with the last packets it may be read first (after a stall of the bridge's loop, both
 * wait in their sockets): those packets would count as dropped when the caller simply hung up
 * over them. Twilio's stop message cannot overtake media on its WebSocket, so it needs no tail.
 */
export const RTP_TAIL_S = 1;

export async function runSipCalls(spec: SipLoadSpec, caller: Int16Array): Promise<CallReport[]> {
  return Promise.all(spec.startsAtMs.map((at) => runSipCall(spec, caller, at)));
}

async function runSipCall(spec: SipLoadSpec, caller: Int16Array, startAt: number): Promise<CallReport> {
  const wait = startAt - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  const r = await placeSipCall({
    target: spec.target,
    caller: callerUntilTail(caller, spec.seconds),
    seconds: spec.seconds,
    codec: spec.codec ?? "pcmu",
    ...(spec.srtp ? { srtp: true } : {}),
    ...(spec.tls ? { tls: true } : {}),
  });
  return reportOf(spec, r);
}

/** What the caller says: the shared timeline, ending RTP_TAIL_S before the call does. */
export function callerUntilTail(caller: Int16Array, seconds: number): Int16Array {
  return caller.subarray(0, Math.max(0, Math.round((seconds - RTP_TAIL_S) * 8000)));
}

/** One SIP call's report in the Twilio load generator's CallReport shape, its turns read from the bridge. */
export async function reportOf(
  spec: Pick<SipLoadSpec, "url" | "bridgeToken" | "windowMs">,
  r: SipCallReport,
): Promise<CallReport> {
  const [w0, w1] = spec.windowMs;
  const turns =
    spec.url && r.status === 200 ? await readTurns(spec.url, r.callId, spec.bridgeToken) : { turns: [] };
  return {
    callSid: r.callId,
    ...(r.error ? { error: r.error } : {}),
    ...(r.endedBy ? { endedBy: r.endedBy } : {}),
    mediaSent: r.rtpSent,
    mediaReceived: r.rtpReceived,
    latenessMs: r.latenessMs.map(round2),
    windowLatenessMs: r.latenessMs.flatMap((l, i) => {
      const at = r.answeredAtEpochMs + r.arrivalsMs[i]!;
      return at >= w0 && at <= w1 ? [round2(l)] : [];
    }),
    stretches: r.streams,
    gaps: r.holes,
    gapFrames: Math.ceil(r.holeMs / 20),
    clears: 0,
    callerV2vMs: [],
    turns: turns.turns,
    ...(turns.error ? { transcriptError: turns.error } : {}),
  };
}

/** The bridge's metrics per assistant reply to caller speech, as the Twilio load generator reads them. */
async function readTurns(
  url: string,
  callId: string,
  bridgeToken: string | undefined,
): Promise<{ turns: TurnFigures[]; error?: string }> {
  try {
    const headers: Record<string, string> = bridgeToken ? { authorization: `Bearer ${bridgeToken}` } : {};
    const res = await fetch(`${url}/calls/${encodeURIComponent(callId)}`, { headers });
    if (!res.ok) return { turns: [], error: `GET /calls/${callId}: ${res.status}` };
    const body = (await res.json()) as { turns?: Array<{ role?: string; metrics?: TurnFigures }> };
    return {
      turns: (body.turns ?? []).flatMap((t) =>
        t.role === "assistant" && t.metrics?.voiceToVoiceMs !== undefined ? [t.metrics] : [],
      ),
    };
  } catch (err) {
    return { turns: [], error: (err as Error).message };
  }
}
