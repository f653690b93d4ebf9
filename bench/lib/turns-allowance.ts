// The turn-taking cases' timelines, given room for a hosted service's time (`--latency`): each case
// places its sound at a fixed time, counting on the greeting being over by 4.2 s and the fallback
// reply playing 2.2 s after the question, which holds for a local service answering in a moment
// but not for one that takes asr + chat + tts ms. So every timeline starts later by what the
// greeting may take more (an E5 session opened for it waits three messages: connected, created,
// first audio), and an over-the-reply sound comes later after its question by the reply's own
// extra time. What is inserted is the timeline's own lead-in or gap, repeated (silence, or the
// case's noise bed, so no new onset appears); every labelled time moves with it.

import { concatPcm } from "../../codecs/pcm.ts";
import type { LocalFaults } from "../../src/config/faults.ts";
import type { LocalLatency } from "../../src/config/latency.ts";
import { DEFAULT_SERVICE_DEADLINES } from "../../src/session/config.ts";
import { CALL_RATE, type TurnCase } from "./turns-cases.ts";

export interface Allowance {
  /** Added before everything: the greeting's extra time, ms. */
  leadMs: number;
  /** Added between an over-the-reply case's question and its sound: the reply's extra time, ms. */
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

const LINE_ALONE_MS = 600;
const samples = (ms: number) => Math.round((ms * CALL_RATE) / 1000);

/** `n` samples of `src` repeated (silence when `src` is empty). */
function tile(src: Int16Array, n: number): Int16Array {
  const out = new Int16Array(n);
  if (src.length === 0) return out;
  for (let at = 0; at < n; at += src.length) out.set(src.subarray(0, Math.min(src.length, n - at)), at);
  return out;
}

export function withAllowance(c: TurnCase, a: Allowance): TurnCase {
  const reply = c.questionEndMs !== undefined ? a.replyMs : 0;
  if (a.leadMs === 0 && reply === 0) return c;
  const start = samples(c.startMs);
  let caller = c.caller;
  if (reply > 0) {
    // The gap between the question and the sound is the line's quiet (or its noise): repeat it.
    const gap = caller.subarray(samples(c.questionEndMs!), start);
    caller = concatPcm([caller.subarray(0, start), tile(gap, samples(reply)), caller.subarray(start)]);
  }
  // Every timeline's first 600 ms are the line alone (the earliest sound starts at 700 ms).
  const lead = caller.subarray(0, Math.min(start, samples(LINE_ALONE_MS)));
  caller = concatPcm([tile(lead, samples(a.leadMs)), caller]);
  const later = (ms: number | undefined) => (ms === undefined ? undefined : ms + a.leadMs + reply);
  return {
    ...c,
    caller,
    startMs: c.startMs + a.leadMs + reply,
    endMs: c.endMs + a.leadMs + reply,
    ...(c.pauseFromMs !== undefined ? { pauseFromMs: later(c.pauseFromMs) } : {}),
    ...(c.pauseToMs !== undefined ? { pauseToMs: later(c.pauseToMs) } : {}),
    ...(c.questionStartMs !== undefined ? { questionStartMs: c.questionStartMs + a.leadMs } : {}),
    ...(c.questionEndMs !== undefined ? { questionEndMs: c.questionEndMs + a.leadMs } : {}),
    maxSeconds: c.maxSeconds + Math.ceil((a.leadMs + reply + a.replyMs) / 1000),
  };
}
