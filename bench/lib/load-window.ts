// A load generator's own CPU time and event-loop delay over the benchmark's measuring window,
// around the calls it runs: a saturated load generator is then seen, not mistaken for the bridge.
import { monitorEventLoopDelay } from "node:perf_hooks";
import type { CallReport, LoadReport } from "./calls-load.ts";

const LOOP_SAMPLE_MS = 5;

export async function measureLoad(
  windowMs: [number, number],
  run: () => Promise<CallReport[]>,
): Promise<LoadReport> {
  // Its samples are whole intervals (resolution + delay): the resolution is taken off below.
  const delay = monitorEventLoopDelay({ resolution: LOOP_SAMPLE_MS });
  let cpuStart: NodeJS.CpuUsage | undefined;
  let cpu: NodeJS.CpuUsage | undefined;
  const [w0, w1] = windowMs;
  // A process started late on a loaded machine finds its window begun: it measures from now (a
  // negative delay is 1 ms to Node, with a warning on stderr).
  setTimeout(
    () => {
      cpuStart = process.cpuUsage();
      delay.enable();
    },
    Math.max(0, w0 - Date.now()),
  ).unref();
  setTimeout(
    () => {
      if (cpuStart) cpu = process.cpuUsage(cpuStart);
      delay.disable();
    },
    Math.max(0, w1 - Date.now()),
  ).unref();
  const calls = await run();
  return {
    calls,
    cpuUs: cpu ? cpu.user + cpu.system : Number.NaN,
    windowS: (w1 - w0) / 1000,
    loopDelayMsP99: delay.count ? delay.percentile(99) / 1e6 - LOOP_SAMPLE_MS : Number.NaN,
    loopDelayMsMax: delay.count ? delay.max / 1e6 - LOOP_SAMPLE_MS : Number.NaN,
  };
}

/** The report of a call that never got going. */
export function failedCall(callSid: string, error: string): CallReport {
  return {
    callSid,
    error,
    mediaSent: 0,
    mediaReceived: 0,
    latenessMs: [],
    windowLatenessMs: [],
    stretches: 0,
    gaps: 0,
    gapFrames: 0,
    clears: 0,
    callerV2vMs: [],
    turns: [],
  };
}
