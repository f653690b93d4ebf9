// The figures of `npm run bench -- calls`, from what the processes reported. Definitions:
//
// bridge_cpu_us_per_call_s: bridge process CPU (user + system, all threads, /proc/<pid>/stat)
//   over the steady-state window (every call live), divided by calls × window seconds.
// frame_lateness_ms_p99: 99th percentile, over the agent frames of every call that arrived in the
//   steady-state window, of their lateness against their stretch's real-time schedule at the
//   simulated Twilio (calls-frames.ts). frame_lateness_ms_p99_all: the same over every frame of
//   the run, call set-up ramp included (N calls starting within a few seconds).
// dropped_frames: inbound frames the bridge did not process (per call, media frames the caller
//   sent minus the frames the bridge's Twilio transport delivered, from its "call ended" log
//   line) + outbound gap frames (20 ms slots of silence inside agent utterances, calls-frames.ts).
// With --transport sip the same figures come from RTP: lateness of each agent packet against its
//   RTP timestamp, relative to the stream's best packet (rtp-lateness.ts; the bridge sends one
//   unbroken stream, silence between replies), each packet's arrival being the kernel's receive
//   stamp (sip-call-media.ts: on loopback, when the bridge sent it, whenever the load generator's
//   loop got to read it); inbound drops from the SIP transport's "RTP media ended" line
//   (rx.frames), inbound_timestamp_gaps its jitter buffer's lost packets; outbound
//   gap frames are the 20 ms slots the agent's timestamps skipped (its send thread more than
//   200 ms late), silence included, so stricter than Twilio's holes inside utterances. Turn
//   metrics (for bridge_overhead_ms) are read from GET /calls/{Call-ID} as for Twilio. There are
//   no clears, and no caller-side voice-to-voice (caller_v2v_ms_p50 is null).
//   rtp_send_late_ms_p99/max: how late the bridge's RTP send thread woke for its 20 ms ticks
//   (/metrics, since the bridge started): the sender's share of the packets' lateness, the rest
//   being the kernel's; rtp_send_realtime: whether that thread got real-time priority (SCHED_FIFO
//   needs CAP_SYS_NICE: root here).
// rss_mb_per_call: (median bridge RSS over the window − RSS when idle after a warm-up) / calls.
// bridge_overhead_ms_p50: per agent reply, voiceToVoiceMs − minEndOfTurnMs. The session runs
//   ASR → chat → TTS preemptively during the end-of-turn wait and lets the audio out when the
//   turn is confirmed, so when the engine chain (plus the VAD's decision lag, at most
//   VAD_LAG_BOUND_MS after the back-dated end of speech) finishes inside the wait, the first
//   audio goes out at end of speech + the wait + whatever the bridge adds: its end-of-turn timer
//   firing late, the confirm → release → transport hand-off. That remainder is the overhead.
//   The benchmark sets minEndOfTurnMs so that synthetic engines always finish inside it; replies
//   where asrMs + llmTtftMs + ttsFirstAudioMs exceed minEndOfTurnMs − VAD_LAG_BOUND_MS (engines
//   on the critical path) are left out and counted as engine_bound_turns.
// latency, v2v_ms_p50/p90, service_floor_ms, bridge_added_ms_p50, chat_requests_per_turn,
//   unanswered_turns: the service-time figures (service-time.ts) over every call's replies, under
//   the timing the service played (--latency); a turn's end-of-turn wait is its eouDelayMs. The
//   chat requests are the service's own count of POST /v1/chat/completions over the load (its
//   debug log's "request" lines), the turns the caller's (the simulator's utterances).
// faults, faults_injected: the failures the service played (--faults) and, per kind, how many it
//   played over the load (its debug log's "playing a fault" lines).

import type { BenchTransport } from "./calls-bridge-ends.ts";
import type { LoadReport, TurnFigures } from "./calls-load.ts";
import { percentile, round } from "./measure.ts";
import { type ChatRequests, serviceTimeFigures } from "./service-time.ts";

/** Speech-end decision after the back-dated end: min silence 160 ms + Silero's fall lag + a 32 ms window. */
export const VAD_LAG_BOUND_MS = 350;

export const TARGETS = {
  bridge_cpu_us_per_call_s: 5000,
  frame_lateness_ms_p99: 20,
  dropped_frames: 0,
  rss_mb_per_call: 5,
  bridge_overhead_ms_p50: 5,
} as const;

export interface BridgeCallEnd {
  inFrames: number;
  inGaps: number;
}

export interface RunFacts {
  transport: BenchTransport;
  calls: number;
  seconds: number;
  windowS: number;
  bridgeCpuUs: number;
  /** Of which the main thread (the event loop every call shares). */
  bridgeMainThreadCpuUs: number;
  serviceCpuUs: number;
  idleRssMb: number;
  loadedRssMb: number;
  activeCallsMidWindow: number;
  /** Busy CPU of the whole machine over the window, µs (the rest of it is other work on the machine). */
  machineBusyUs: number;
  /** The bridge's own event-loop lag over the window (prom-client, 10 ms sampling), beyond the sampling interval. */
  bridgeLoopLagMs: { p99: number; max: number };
  /** The RTP send thread's wake-up lateness (SIP; NaN otherwise). */
  rtpSendLateMs: { p99: number; max: number; realtime: boolean };
  minEndOfTurnMs: number;
  reniced: boolean;
  loads: LoadReport[];
  bridgeEnds: Map<string, BridgeCallEnd>;
  /** The timing the service played (`none`, `hosted: …`). */
  latency: string;
  /** E1 POSTs the service handled over the load, null when not counted. */
  chatRequests: ChatRequests | null;
  /** The failures the service played (`none`, `chat503=0.3,… seed 1`) and how many of each it did. */
  faults?: { description: string; played: Readonly<Record<string, number>> };
}

export function overheadOf(t: TurnFigures, minEndOfTurnMs: number): number | null {
  if (t.voiceToVoiceMs === undefined) return null;
  const chain = (t.asrMs ?? 0) + (t.llmTtftMs ?? 0) + (t.ttsFirstAudioMs ?? 0);
  if (chain > minEndOfTurnMs - VAD_LAG_BOUND_MS) return null;
  return t.voiceToVoiceMs - minEndOfTurnMs;
}

export function summarize(f: RunFacts): Record<string, unknown> {
  const calls = f.loads.flatMap((l) => l.calls);
  const lateness: number[] = [];
  const allLateness: number[] = [];
  let gapFrames = 0;
  let droppedIn = 0;
  let inGaps = 0;
  let unmatched = 0;
  const overhead: number[] = [];
  let engineBound = 0;
  const v2v: number[] = [];
  const eou: number[] = [];
  const callerV2v: number[] = [];
  for (const c of calls) {
    for (const v of c.windowLatenessMs) lateness.push(v);
    for (const v of c.latenessMs) allLateness.push(v);
    gapFrames += c.gapFrames;
    const end = f.bridgeEnds.get(c.callSid);
    if (end) {
      droppedIn += Math.max(0, c.mediaSent - end.inFrames);
      inGaps += end.inGaps;
    } else if (!c.error) {
      unmatched++;
      droppedIn += c.mediaSent;
    }
    for (const t of c.turns) {
      const o = overheadOf(t, f.minEndOfTurnMs);
      if (o === null) engineBound++;
      else overhead.push(o);
      if (t.voiceToVoiceMs !== undefined) v2v.push(t.voiceToVoiceMs);
      if (t.eouDelayMs !== undefined) eou.push(t.eouDelayMs);
    }
    callerV2v.push(...c.callerV2vMs);
  }
  const timed = calls.filter((c) => c.callerTurns);
  const serviceTime = serviceTimeFigures({
    turns: calls.flatMap((c) => c.turns),
    chatRequests: f.chatRequests,
    // Without the caller's count (SIP), the bridge's replies stand for the answered turns.
    answeredTurns: timed.length
      ? timed.reduce((n, c) => n + c.callerTurns!.answered, 0)
      : calls.reduce((n, c) => n + c.turns.length, 0),
    unansweredTurns: timed.length ? timed.reduce((n, c) => n + c.callerTurns!.unanswered, 0) : null,
    eouWaitMs: f.minEndOfTurnMs,
  });
  const perCallS = f.calls * f.windowS;
  const lg = f.loads.reduce((n, l) => n + l.cpuUs, 0);
  const figures = {
    bridge_cpu_us_per_call_s: round(f.bridgeCpuUs / perCallS, 0),
    frame_lateness_ms_p99: round(percentile(lateness, 99), 2),
    dropped_frames: droppedIn + gapFrames,
    rss_mb_per_call: round((f.loadedRssMb - f.idleRssMb) / f.calls, 2),
    bridge_overhead_ms_p50: round(percentile(overhead, 50), 1),
  };
  const missed = (Object.keys(TARGETS) as (keyof typeof TARGETS)[]).filter(
    (k) => !(figures[k] <= TARGETS[k]),
  );
  return {
    bench: "calls",
    transport: f.transport,
    calls: f.calls,
    seconds: f.seconds,
    ...figures,
    targets_missed: missed,
    latency: f.latency,
    ...(f.faults ? { faults: f.faults.description, faults_injected: f.faults.played } : {}),
    ...serviceTime,
    window_s: round(f.windowS, 1),
    active_calls_mid_window: f.activeCallsMidWindow,
    frame_lateness_ms_p50: round(percentile(lateness, 50), 2),
    frame_lateness_ms_max: round(maxOf(lateness), 2),
    frame_lateness_ms_p99_all: round(percentile(allLateness, 99), 2),
    agent_frames_in_window: lateness.length,
    agent_frames: allLateness.length,
    dropped_inbound_frames: droppedIn,
    outbound_gap_frames: gapFrames,
    inbound_timestamp_gaps: inGaps,
    calls_without_bridge_record: unmatched,
    bridge_overhead_ms_p90: round(percentile(overhead, 90), 1),
    overhead_turns: overhead.length,
    engine_bound_turns: engineBound,
    bridge_v2v_ms_p50: round(percentile(v2v, 50), 1),
    eou_delay_ms_p50: round(percentile(eou, 50), 1),
    caller_v2v_ms_p50: round(percentile(callerV2v, 50), 1),
    min_end_of_turn_ms: f.minEndOfTurnMs,
    reniced: f.reniced,
    idle_rss_mb: round(f.idleRssMb, 1),
    loaded_rss_mb: round(f.loadedRssMb, 1),
    service_cpu_us_per_call_s: round(f.serviceCpuUs / perCallS, 0),
    bridge_main_thread_cpu_pct: round((f.bridgeMainThreadCpuUs / 1e6 / f.windowS) * 100, 1),
    bridge_loop_lag_ms_p99: round(f.bridgeLoopLagMs.p99, 1),
    bridge_loop_lag_ms_max: round(f.bridgeLoopLagMs.max, 1),
    ...(f.transport === "sip"
      ? {
          rtp_send_late_ms_p99: round(f.rtpSendLateMs.p99, 1),
          rtp_send_late_ms_max: round(f.rtpSendLateMs.max, 1),
          rtp_send_realtime: f.rtpSendLateMs.realtime,
        }
      : {}),
    other_cpu_cores: round((f.machineBusyUs - f.bridgeCpuUs - f.serviceCpuUs - lg) / 1e6 / f.windowS, 2),
    lg_procs: f.loads.length,
    lg_cpu_us_per_call_s: round(lg / perCallS, 0),
    lg_loop_delay_ms_p99: round(Math.max(...f.loads.map((l) => l.loopDelayMsP99)), 1),
    lg_loop_delay_ms_max: round(Math.max(...f.loads.map((l) => l.loopDelayMsMax)), 1),
    clears: calls.reduce((n, c) => n + c.clears, 0),
    call_errors: calls.filter((c) => c.error).length,
    transcript_errors: calls.filter((c) => c.transcriptError).length,
  };
}

function maxOf(xs: readonly number[]): number {
  let m = 0;
  for (const x of xs) if (x > m) m = x;
  return m;
}
