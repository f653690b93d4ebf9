// One load-generator process of `npm run bench -- soak`: its share of calls that each last the
// whole run (Twilio: simulateCall; SIP: placeSipCall), every caller speaking the shared timeline
// and pressing its keys, with nothing kept per frame: each agent frame is timed as it arrives
// (calls-frames.ts for Twilio, rtp-lateness.ts for SIP; both by the kernel's receive stamp, and
// apart by the time it was read) into the histogram of the window it arrived in. At each window's
// end (plus a grace for frames in flight) it appends one JSON line (SoakWindowReport) to its
// output file, with its own event-loop delay over the window, so a stalled load generator is told
// apart from the bridge. Each gap in the agent's audio is also written to stderr (the load's log) as
// one JSON line with its call and time, to be found in the bridge's log.
//
// Usage (by bench/soak.ts): node soak-load.ts SPEC.json OUT.jsonl
import { randomBytes } from "node:crypto";
import { appendFile, readFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { newCallSid, simulateCall } from "../../tools/twilio-sim/simulate.ts";
import { AgentFrameTimer } from "./calls-frames.ts";
import type { LoadSpec } from "./calls-load.ts";
import type { SipLoadSpec } from "./sip-load.ts";
import { placeSipCall } from "./sip-uac.ts";
import { LatenessHistogram, type SoakWindowReport, windowOf } from "./soak-window.ts";
import { stampedAttach } from "./ws-stamps.ts";

export interface SoakPlan {
  /** Caller speech starts on the timeline, ms from the stream's start (or the SIP answer). */
  speechStartsMs: number[];
  dtmf: Array<{ digit: string; atMs: number }>;
  /** Epoch ms. */
  windows: [number, number][];
  /**
   * Twilio: the nice of the thread that reads and stamps the bridge's frames (the bridge's own when
   * the load generators run at a lower priority; see native/bench/ws-stamps.c).
   */
  stampReaderNice?: number;
}

export type SoakLoadSpec = (LoadSpec | SipLoadSpec) & { soak: SoakPlan };

/** How long after a window's end its line is written: frames sent before the end may still be on their way. */
const GRACE_MS = 1000;
const LOOP_SAMPLE_MS = 5;

const [specPath, outPath] = process.argv.slice(2);
if (!specPath || !outPath) throw new Error("usage: soak-load.ts SPEC.json OUT.jsonl");
const spec = JSON.parse(readFileSync(specPath, "utf8")) as SoakLoadSpec;
const raw = readFileSync(spec.timelinePath);
const caller = new Int16Array(raw.buffer, raw.byteOffset, raw.byteLength >> 1);
const { windows } = spec.soak;
const callerEvents = [...spec.soak.speechStartsMs, ...spec.soak.dtmf.map((d) => d.atMs)].sort(
  (a, b) => a - b,
);

const hist = windows.map(() => new LatenessHistogram());
const readHist = windows.map(() => new LatenessHistogram());
const frames = windows.map(() => 0);
const gapFrames = windows.map(() => 0);
const readGapFrames = windows.map(() => 0);
// Twilio: the bridge's frames are read by the addon's thread with their kernel receive stamps when
// it is built (ws-stamps.ts); the read time is then timed apart, as SIP's read lateness.
const attachReader = "target" in spec ? undefined : stampedAttach(spec.soak.stampReaderNice);
let callErrors = 0;

function frameAt(
  at: number,
  latenessMs: number,
  gap: number,
  readLatenessMs?: number,
  readGap?: number,
): void {
  const w = windowOf(windows, at);
  if (w < 0 || w >= windows.length) return;
  hist[w]!.add(latenessMs);
  if (readLatenessMs !== undefined) readHist[w]!.add(readLatenessMs);
  frames[w]!++;
  gapFrames[w]! += gap;
  if (readGap !== undefined) readGapFrames[w]! += readGap;
}

// The window's lines: loop delay read and reset at each window's end.
const delay = monitorEventLoopDelay({ resolution: LOOP_SAMPLE_MS });
setTimeout(() => delay.enable(), Math.max(0, windows[0]![0] - Date.now())).unref();
windows.forEach(([, end], i) => {
  const loop = { max: Number.NaN, p99: Number.NaN };
  setTimeout(() => {
    // Its samples are whole intervals (resolution + delay): the resolution is taken off.
    loop.max = delay.count ? delay.max / 1e6 - LOOP_SAMPLE_MS : Number.NaN;
    loop.p99 = delay.count ? delay.percentile(99) / 1e6 - LOOP_SAMPLE_MS : Number.NaN;
    delay.reset();
  }, end - Date.now()).unref();
  setTimeout(
    () => {
      const line: SoakWindowReport = {
        window: i,
        frames: frames[i]!,
        gapFrames: gapFrames[i]!,
        lateness: hist[i]!.toSparse(),
        latenessMax: hist[i]!.max,
        ...(readHist[i]!.total
          ? { readLateness: readHist[i]!.toSparse(), readLatenessMax: readHist[i]!.max }
          : {}),
        ...(attachReader ? { readGapFrames: readGapFrames[i]! } : {}),
        loopDelayMsMax: loop.max,
        loopDelayMsP99: loop.p99,
        callErrors,
      };
      hist[i] = new LatenessHistogram(); // its counts are written: free them
      readHist[i] = new LatenessHistogram();
      appendFile(outPath, `${JSON.stringify(line)}\n`, (err) => {
        if (err) process.stderr.write(`soak load: ${err.message}\n`);
      });
    },
    end + GRACE_MS - Date.now(),
  );
});

/** One line per dry spell inside the agent's speech: which call, when (epoch ms), how many frames. */
function logGap(call: string, atEpochMs: number, gapFrames: number, by: "stamp" | "read"): void {
  if (gapFrames <= 0) return;
  const at = new Date(atEpochMs).toISOString();
  process.stderr.write(
    `${JSON.stringify({ gap: by, call, at, atEpochMs: Math.round(atEpochMs), gapFrames })}\n`,
  );
}

async function twilioCall(s: LoadSpec, startAt: number): Promise<void> {
  await sleepUntil(startAt);
  const callSid = newCallSid();
  const timer = new AgentFrameTimer({ callerSpeechStartsMs: callerEvents });
  const readTimer = attachReader ? new AgentFrameTimer({ callerSpeechStartsMs: callerEvents }) : undefined;
  let t0 = Number.NaN; // epoch ms of the stream's start
  const r = await simulateCall({
    url: s.url,
    authToken: s.authToken,
    callSid,
    caller: { samples: caller, rate: 8000 },
    dtmf: spec.soak.dtmf,
    maxSeconds: s.seconds,
    keep: false,
    fetchTranscript: false,
    onEvent: (e) => {
      if (e.kind === "start") t0 = performance.timeOrigin + performance.now() - e.atMs;
    },
    ...(attachReader ? { attachReader } : {}),
    onAgentMessage: (kind, atMs, readAtMs) => {
      if (kind === "clear") {
        timer.clear(atMs);
        readTimer?.clear(readAtMs);
        return;
      }
      const gapsBefore = timer.gapFrames;
      const late = timer.frame(atMs);
      const gap = timer.gapFrames - gapsBefore;
      logGap(callSid, t0 + atMs, gap, "stamp");
      if (!readTimer) return frameAt(t0 + atMs, late, gap);
      const readGapsBefore = readTimer.gapFrames;
      const readLate = readTimer.frame(readAtMs);
      const readGap = readTimer.gapFrames - readGapsBefore;
      logGap(callSid, t0 + readAtMs, readGap, "read");
      frameAt(t0 + atMs, late, gap, readLate, readGap);
    },
  });
  // The caller hangs up at the end of its timeline, or the run's limit does; the bridge never should.
  if (r.endedBy === "bridge") throw new Error(`call ${r.callSid}: the bridge ended it`);
}

async function sipCall(s: SipLoadSpec, startAt: number): Promise<void> {
  await sleepUntil(startAt);
  const sipCallId = randomBytes(12).toString("hex"); // a Call-ID needs no "@host" (RFC 3261 §25.1)
  const r = await placeSipCall({
    target: s.target,
    callId: sipCallId,
    caller: caller.subarray(0, Math.max(0, (s.seconds - 1) * 8000)),
    seconds: s.seconds,
    codec: s.codec ?? "pcmu",
    dtmf: spec.soak.dtmf,
    keep: false,
    onPacket: (at, late, holeMs, readLate) => {
      const gap = Math.ceil(holeMs / 20);
      logGap(sipCallId, at, gap, "stamp");
      frameAt(at, late, gap, readLate);
    },
  });
  if (r.error) throw new Error(`call ${r.callId}: ${r.error}`);
  if (r.endedBy !== "uac") throw new Error(`call ${r.callId} ended by the bridge`);
}

function sleepUntil(t: number): Promise<void> {
  return new Promise((r) => setTimeout(r, Math.max(0, t - Date.now())));
}

await Promise.all(
  spec.startsAtMs.map((at) =>
    ("target" in spec ? sipCall(spec, at) : twilioCall(spec, at)).catch((err: Error) => {
      callErrors++;
      process.stderr.write(`soak load: ${err.message}\n`);
    }),
  ),
);
