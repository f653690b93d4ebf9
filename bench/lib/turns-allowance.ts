// The turn-taking cases' timelines, given room for a hosted service's time (`--latency`) and its
// faults (`--faults`): each case places its sound at a fixed time, counting on the greeting being
// over by 4.2 s and the fallback reply playing 2.2 s after the question, which holds for a local
// service answering in a moment but not for one that takes asr + chat + tts ms, or seconds more to
// recover from a fault. No fixed room fits both a reply that recovered and one that did not. So the
// timeline waits for the agent as a caller does (the simulator's cues,
// tools/twilio-sim/caller-timeline.ts): the caller's first words after the greeting come once it has
// been over as long as on a local service's timeline, and a sound over the agent begins as far into
// its speech as there. Meanwhile the room after the case's sound plays on. The judge moves the
// labels onto the stream by the simulator's holds (`onStreamCase`).

import { concatPcm } from "../../codecs/pcm.ts";
import type { LocalFaults } from "../../src/config/faults.ts";
import type { LocalLatency } from "../../src/config/latency.ts";
import { DEFAULT_SERVICE_DEADLINES } from "../../src/session/config.ts";
import {
  CallerTimeline,
  onStream,
  type TimelineCue,
  type TimelineHold,
} from "../../tools/twilio-sim/caller-timeline.ts";
import {
  CALL_RATE,
  GREETING_BEGINS_MS,
  GREETING_ENDS_MS,
  REPLY_BEGINS_MS,
  REPLY_MS,
  type TurnCase,
} from "./turns-cases.ts";

/** How much later than on a local service the agent may begin (heardAsPlanned: the offline gate's timelines). */
export interface Allowance {
  /** The greeting's extra time, ms. */
  leadMs: number;
  /** A reply's extra time, ms. */
  replyMs: number;
}

/**
 * Under faults (`--faults`), a reply (the greeting too) may also take what recovering costs: a
 * refused chat sent again, a stalled one given up after the gap deadline, a cut TTS session
 * reopened. Without that room the greeting, still being recovered, runs into the caller's
 * question and the case cannot set its scene.
 */
function recoveryMs(latency: LocalLatency, faults: LocalFaults | undefined): number {
  if (!faults || faults.chat503 + faults.chatStall + faults.ttsCut + faults.asr503 === 0) return 0;
  return 2 * latency.chatMs + DEFAULT_SERVICE_DEADLINES.chatGapMs + 3 * latency.ttsMs;
}

export function allowanceFor(latency: LocalLatency, faults?: LocalFaults): Allowance {
  const recovery = recoveryMs(latency, faults);
  return {
    leadMs: 3 * latency.ttsMs + recovery,
    replyMs: latency.asrMs + latency.chatMs + 3 * latency.ttsMs + recovery,
  };
}

/** How much of the room before a cue its hold plays back and forth (the simulator's fill). */
const FILL_MS = 1000;
/** A wait for the agent to be heard ends after this even if it never is (the case is then judged invalid). */
const MAX_HOLD_MS = 20_000;
/** A wait for the greeting to end: longer than any recovery, shorter than a caller's patience. */
const MAX_QUIET_HOLD_MS = 10_000;
/** The room played while a cue holds starts this long after the case's sound (its tail, reverberation). */
const TAIL_SKIP_MS = 300;
/** ...and is at least this long, else the room before the cue plays. */
const MIN_FILL_MS = 400;
/** The least quiet after the greeting a caller waits for. */
const MIN_QUIET_MS = 300;
const samples = (ms: number) => Math.round((ms * CALL_RATE) / 1000);

/**
 * `c` given room for a slower service: a cue before the caller's first words after the greeting
 * (its question, or its sound) and one before its sound over the agent (the greeting, or the reply
 * to its question). While a cue holds, the room after the case's sound plays: the room before it
 * may hold a "Hello?" (`--hello`) or a pop (`--pop`), which the caller would otherwise say again
 * and again while waiting.
 */
export function withAllowance(c: TurnCase, a: Allowance): TurnCase {
  if (a.leadMs === 0 && a.replyMs === 0) return c;
  const timelineMs = (c.caller.length * 1000) / CALL_RATE;
  const after =
    timelineMs - c.endMs >= TAIL_SKIP_MS + MIN_FILL_MS
      ? {
          fillFromMs: c.endMs + TAIL_SKIP_MS,
          fillToMs: Math.min(timelineMs, c.endMs + TAIL_SKIP_MS + FILL_MS),
        }
      : undefined;
  const cues: TimelineCue[] = [];
  const firstWordsMs = c.over === "greeting" ? undefined : (c.questionStartMs ?? c.startMs);
  if (firstWordsMs !== undefined)
    cues.push({
      atMs: firstWordsMs,
      agentQuietMs: Math.max(MIN_QUIET_MS, firstWordsMs - GREETING_ENDS_MS),
      ...(after ?? { fillFromMs: Math.max(0, firstWordsMs - FILL_MS) }),
      maxHoldMs: MAX_QUIET_HOLD_MS,
    });
  if (c.over !== "silence" && c.agentMs !== undefined) {
    // The room from after the question (or the call's start) to the sound is what the hold plays.
    const roomFrom = c.questionEndMs !== undefined ? c.questionEndMs + 300 : 0;
    cues.push({
      atMs: c.startMs,
      agentHeardMs: c.agentMs,
      ...(after ?? { fillFromMs: Math.max(roomFrom, c.startMs - FILL_MS) }),
      maxHoldMs: MAX_HOLD_MS,
    });
  }
  const holdS = cues.reduce((n, q) => n + (q.maxHoldMs ?? 0), 0) / 1000;
  return { ...c, cues, maxSeconds: c.maxSeconds + Math.ceil(holdS) };
}

/** `c`'s labelled times moved onto the stream by the holds of its timeline's cues (the simulator's). */
export function onStreamCase(c: TurnCase, holds: readonly TimelineHold[]): TurnCase {
  if (holds.length === 0) return c;
  const moved = { ...c, startMs: onStream(c.startMs, holds), endMs: onStream(c.endMs, holds) };
  for (const key of ["pauseFromMs", "pauseToMs", "questionStartMs", "questionEndMs"] as const) {
    const ms = c[key];
    if (ms !== undefined) moved[key] = onStream(ms, holds);
  }
  return moved;
}

/**
 * `c` (withAllowance's) as the simulator sends it when the agent is as late as the allowance counts
 * on: its greeting `leadMs` later, its reply `replyMs` later (each as long as on a local service).
 * For what plays the timeline with no agent to wait for (the offline gate, turns-gate.ts).
 */
export function heardAsPlanned(c: TurnCase, a: Allowance): TurnCase {
  if (!c.cues?.length) return c;
  const greetingFrom = GREETING_BEGINS_MS + a.leadMs;
  const greetingTo = GREETING_ENDS_MS + a.leadMs;
  // The question's cue waits for the greeting's end, as on a local service: it comes `leadMs` later.
  const reply =
    c.questionEndMs !== undefined
      ? c.questionEndMs + a.leadMs + REPLY_BEGINS_MS + a.replyMs
      : Number.POSITIVE_INFINITY;
  const agentAt = (ms: number) =>
    (ms >= greetingFrom && ms < greetingTo) || (ms >= reply && ms < reply + REPLY_MS);
  const timeline = new CallerTimeline(c.caller, CALL_RATE, c.cues);
  const frame = new Int16Array(samples(20));
  const frames: Int16Array[] = [];
  for (let k = 0; !timeline.done; k++) {
    timeline.next(frame, k > 0 && agentAt((k - 1) * 20));
    frames.push(frame.slice());
  }
  const { cues: _, ...rest } = onStreamCase(c, timeline.holds);
  return { ...rest, caller: concatPcm(frames) };
}
