// One load-generator process of `npm run bench -- calls`: places its share of the simulated
// Twilio calls (bridges/twilio/sim/simulate.ts) at the start times it is given, each speaking the
// shared caller timeline, and writes one JSON report: per call the caller-side frame analysis
// (each agent frame timed by its kernel receive stamp, ws-stamps.ts) and the bridge's per-turn
// metrics, plus this process's own CPU time and event-loop delay over the measuring window (so a
// saturated load generator is seen, not mistaken for the bridge).
//
// Usage (by bench/calls.ts): node calls-load.ts SPEC.json OUT.json
import { readFileSync, writeFileSync } from "node:fs";
import { simulateCall } from "../../tools/twilio-sim/simulate.ts";
import { analyzeAgentFrames } from "./calls-frames.ts";
import { failedCall, measureLoad } from "./load-window.ts";
import { stampedAttach } from "./ws-stamps.ts";

export interface LoadSpec {
  url: string;
  authToken: string;
  /** The bridge's token, for GET /calls/:id. */
  bridgeToken?: string | undefined;
  /** Raw little-endian Int16 mono 8 kHz: what every caller says, from the start of its stream. */
  timelinePath: string;
  seconds: number;
  /** Epoch ms each call of this process starts at. */
  startsAtMs: number[];
  /** Measuring window, epoch ms. */
  windowMs: [number, number];
}

export interface TurnFigures {
  eouDelayMs?: number;
  asrMs?: number;
  llmTtftMs?: number;
  ttsFirstAudioMs?: number;
  voiceToVoiceMs?: number;
}

export interface CallReport {
  callSid: string;
  error?: string;
  endedBy?: string;
  mediaSent: number;
  mediaReceived: number;
  /** Per agent frame, ms (see calls-frames.ts); rounded to 0.01 ms. */
  latenessMs: number[];
  /** The same, for the frames that arrived inside the measuring window only. */
  windowLatenessMs: number[];
  stretches: number;
  gaps: number;
  gapFrames: number;
  clears: number;
  /** Caller-side voice-to-voice per caller utterance (simulator's own yardstick), ms. */
  callerV2vMs: number[];
  /** The bridge's metrics per assistant reply to caller speech (GET /calls/:id). */
  turns: TurnFigures[];
  /**
   * The caller's utterances (simulator's yardstick) with agent audio after them before the next
   * one or the call's end, and those without; absent where the caller does not time its turns (SIP).
   */
  callerTurns?: { answered: number; unanswered: number };
  transcriptError?: string;
}

export interface LoadReport {
  calls: CallReport[];
  /** This process's CPU over the window, µs. */
  cpuUs: number;
  windowS: number;
  loopDelayMsP99: number;
  loopDelayMsMax: number;
}

const round2 = (v: number) => Math.round(v * 100) / 100;

function replyTurns(transcript: unknown): TurnFigures[] {
  const turns = (transcript as { turns?: unknown[] } | undefined)?.turns;
  if (!Array.isArray(turns)) return [];
  const out: TurnFigures[] = [];
  for (const t of turns as Array<{ role?: string; metrics?: TurnFigures }>) {
    if (t.role === "assistant" && t.metrics?.voiceToVoiceMs !== undefined) out.push(t.metrics);
  }
  return out;
}

// The agent's frames are timed by their kernel receive stamps when the addon is built (ws-stamps.ts).
const attachReader = stampedAttach();

async function runCall(spec: LoadSpec, caller: Int16Array, startAt: number): Promise<CallReport> {
  const wait = startAt - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  try {
    // Epoch time of the stream's start, to place each frame against the window.
    let t0 = Number.NaN;
    const r = await simulateCall({
      url: spec.url,
      authToken: spec.authToken,
      bridgeToken: spec.bridgeToken,
      caller: { samples: caller, rate: 8000 },
      maxSeconds: spec.seconds,
      ...(attachReader ? { attachReader } : {}),
      onEvent: (e) => {
        if (e.kind === "start") t0 = performance.timeOrigin + performance.now() - e.atMs;
      },
    });
    const [w0, w1] = spec.windowMs;
    const starts = r.turns.map((t) => t.startMs);
    const frames = analyzeAgentFrames(r.mediaReceivedMs, {
      clearsMs: r.clears,
      callerSpeechStartsMs: starts,
    });
    return {
      callSid: r.callSid,
      endedBy: r.endedBy,
      mediaSent: r.mediaSent,
      mediaReceived: r.mediaReceived,
      latenessMs: frames.latenessMs.map(round2),
      windowLatenessMs: frames.latenessMs.flatMap((l, i) => {
        const at = t0 + r.mediaReceivedMs[i]!;
        return at >= w0 && at <= w1 ? [round2(l)] : [];
      }),
      stretches: frames.stretches,
      gaps: frames.gaps,
      gapFrames: frames.gapFrames,
      clears: r.clears.length,
      callerV2vMs: r.turns.flatMap((t) => (t.responseMs === null ? [] : [t.responseMs])),
      callerTurns: {
        answered: r.turns.filter((t) => t.responseMs !== null).length,
        unanswered: r.turns.filter((t) => t.responseMs === null).length,
      },
      turns: replyTurns(r.transcript),
      ...(r.transcriptError ? { transcriptError: r.transcriptError } : {}),
    };
  } catch (err) {
    return failedCall("", (err as Error).message);
  }
}

async function main(): Promise<void> {
  const [specPath, outPath] = process.argv.slice(2);
  if (!specPath || !outPath) throw new Error("usage: calls-load.ts SPEC.json OUT.json");
  const spec = JSON.parse(readFileSync(specPath, "utf8")) as LoadSpec;
  const raw = readFileSync(spec.timelinePath);
  const caller = new Int16Array(raw.buffer, raw.byteOffset, raw.byteLength >> 1);

  const report = await measureLoad(spec.windowMs, () =>
    Promise.all(spec.startsAtMs.map((at) => runCall(spec, caller, at))),
  );
  writeFileSync(outPath, JSON.stringify(report));
}

await main();
