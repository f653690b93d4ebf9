// How late the event loop runs the timers that pace the calls' audio: the bridge's event-loop lag,
// read from the wake-ups it already makes instead of a sampling timer of its own. A timer that
// fires only to be measured wakes the loop every period: prom-client's monitor at 50 ms cost an
// idle bridge on the 2-core VM ~1,700 µs of CPU per second (20 wake-ups from idle), more than
// everything else the idle bridge does, and a Discord channel's voice ~850 µs/s more.
//
// The Twilio pacers and the Discord voice clock record each wake-up's lateness here. A sampling
// timer fills in where nothing paced runs: every 50 ms while the bridge has calls but no paced
// timer fired in the last period (SIP, paced by its native thread), once a second otherwise.
import { createHistogram, type RecordableHistogram } from "node:perf_hooks";

/** Sampling period while calls are up and no paced timer reports, ms. */
export const SAMPLE_BUSY_MS = 50;
/** Sampling period while paced timers report, or nothing is going on, ms. */
export const SAMPLE_IDLE_MS = 1000;

/** One reader of the lag (a bridge's /metrics): its histogram and whether it has calls up. */
interface Registration {
  readonly histogram: RecordableHistogram;
  readonly busy: () => boolean;
}

const registrations = new Set<Registration>();
let recordsSinceSample = 0;
let sampler: NodeJS.Timeout | undefined;
let period = SAMPLE_IDLE_MS;

/** A paced timer woke `lateMs` after it was due (negative: early, as libuv's whole ms allow). */
export function recordTimerLateness(lateMs: number): void {
  recordsSinceSample++;
  if (registrations.size === 0) return;
  // Histograms count integers >= 1: nanoseconds, as perf_hooks' event-loop monitor does.
  const ns = lateMs > 0 ? Math.round(lateMs * 1e6) + 1 : 1;
  for (const r of registrations) r.histogram.record(ns);
}

export interface LoopLag {
  /** The loop's lag in ns, fed by every paced wake-up and the sampler; reset it as you read it. */
  readonly histogram: RecordableHistogram;
  /** Stops feeding it (the sampler stops with the last one). */
  close(): void;
}

/** A new reader of the lag; `busy` says whether its bridge has calls (the sampler then fills in at SAMPLE_BUSY_MS). */
export function openLoopLag(busy: () => boolean = () => false): LoopLag {
  const r: Registration = { histogram: createHistogram(), busy };
  registrations.add(r);
  if (!sampler) schedule(SAMPLE_IDLE_MS);
  return {
    histogram: r.histogram,
    close() {
      registrations.delete(r);
      if (registrations.size === 0 && sampler) {
        clearTimeout(sampler);
        sampler = undefined;
      }
    },
  };
}

/** The sampler's period now, ms. */
export function samplingPeriodMs(): number {
  return period;
}

function callsUp(): boolean {
  for (const r of registrations) if (r.busy()) return true;
  return false;
}

function schedule(periodMs: number): void {
  period = periodMs;
  const due = performance.now() + periodMs;
  sampler = setTimeout(() => {
    const paced = recordsSinceSample > 0;
    recordTimerLateness(performance.now() - due);
    recordsSinceSample = 0;
    schedule(!paced && callsUp() ? SAMPLE_BUSY_MS : SAMPLE_IDLE_MS);
  }, periodMs);
  sampler.unref();
}
