// Child processes of the calls benchmark and what /proc says about them: each part (local
// service, bridge, load generators) runs as its own Node process so that the bridge's CPU time
// and memory are its own.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { closeSync, existsSync, openSync, readdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** V8's helper threads as bin/voice-bridge sizes them: one per core beyond the main thread's, 1 to 4. */
export const V8_POOL_SIZE = Math.min(4, Math.max(1, availableParallelism() - 1));
/** The flags bin/voice-bridge runs the sources with. */
export const NODE_FLAGS = [
  "--experimental-strip-types",
  "--disable-warning=ExperimentalWarning",
  "--max-semi-space-size=32",
  "--heap-growing-percent=100",
  `--v8-pool-size=${V8_POOL_SIZE}`,
  "--no-parallel-weak-ref-clearing",
  "--external-memory-accounted-in-global-limit",
];

const CLK_TCK = (() => {
  const r = spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" });
  const v = Number(r.stdout?.trim());
  return Number.isFinite(v) && v > 0 ? v : 100;
})();

/**
 * Starts `node [flags] args` with stdout and stderr appended to `logFile`; with `nice`, under
 * `nice -n NICE` (which execs node, so the pid is node's and every thread inherits the priority).
 */
export function spawnNode(
  args: string[],
  env: NodeJS.ProcessEnv,
  logFile: string,
  nice?: number,
): ChildProcess {
  const fd = openSync(logFile, "a");
  const argv = [process.execPath, ...NODE_FLAGS, ...args];
  if (nice !== undefined) argv.unshift("nice", "-n", String(nice));
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: ROOT,
    env,
    stdio: ["ignore", fd, fd],
  });
  closeSync(fd);
  return child;
}

/** Waits until `file` has a line matching `re`; returns the match. */
export async function waitForLine(
  file: string,
  re: RegExp,
  timeoutMs: number,
  child?: ChildProcess,
): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = existsSync(file) ? readFileSync(file, "utf8") : "";
    const m = text.match(re);
    if (m) return m;
    if (child && child.exitCode !== null) {
      throw new Error(`process exited (${child.exitCode}) before ${re}; its log:\n${text.slice(-2000)}`);
    }
    if (Date.now() > deadline)
      throw new Error(`no ${re} in ${file} after ${timeoutMs} ms:\n${text.slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * CPU time of a whole process, µs, at the scheduler's nanosecond resolution: the sum of its live
 * threads' run time (schedstat). /proc/PID/stat counts in clock ticks (10 ms), which over a few
 * seconds of a light path is a step of 1,000 µs/s or more; a thread that exited during the window
 * is missing here (the bridge's threads — V8's, libuv's, the VAD worker — live as long as it does).
 */
export function processRunUs(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return ns / 1000;
}

/** User + system CPU of a whole process (all its threads), µs; clock-tick resolution. */
export function processCpuUs(pid: number): number {
  return cpuOfStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
}

/** The same for the process's main thread alone (the event loop). */
export function mainThreadCpuUs(pid: number): number {
  return cpuOfStat(readFileSync(`/proc/${pid}/task/${pid}/stat`, "utf8"));
}

/**
 * How long the process's main thread has waited on a run queue, runnable but not running (the
 * kernel's schedstat), and how long it ran, µs: a stalled event loop that was waiting for a core
 * shows up here, one that was busy or blocked in a system call does not.
 */
export function mainThreadSchedUs(pid: number): { runUs: number; waitUs: number } {
  const [run, wait] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8")
    .trim()
    .split(/\s+/)
    .map(Number);
  return { runUs: (run ?? Number.NaN) / 1000, waitUs: (wait ?? Number.NaN) / 1000 };
}

/**
 * Times a process's main thread has gone to sleep and been woken since it started (its voluntary
 * context switches): on a VM where each wake-up from idle costs more than the work it wakes for,
 * the count explains the CPU.
 */
export function mainThreadWakeups(pid: number): number {
  const m = readFileSync(`/proc/${pid}/task/${pid}/status`, "utf8").match(
    /^voluntary_ctxt_switches:\s+(\d+)/m,
  );
  if (!m) throw new Error(`no voluntary_ctxt_switches for pid ${pid}`);
  return Number(m[1]);
}

function cpuOfStat(stat: string): number {
  // Fields after the command name (which may hold spaces) start at field 3 (state).
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const utime = Number(f[11]);
  const stime = Number(f[12]);
  return ((utime + stime) * 1e6) / CLK_TCK;
}

/** Resident set size of a process, MB. */
export function processRssMb(pid: number): number {
  const m = readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmRSS:\s+(\d+)\s+kB/m);
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]) / 1024;
}

/** SIGTERM, then SIGKILL if it has not exited within `graceMs`. Resolves with the exit code. */
export function stopProcess(child: ChildProcess, graceMs: number): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill("SIGKILL"), graceMs);
    child.once("exit", (code) => {
      clearTimeout(kill);
      resolve(code);
    });
    child.kill("SIGTERM");
  });
}

/** Resolves when the child exits; rejects after `timeoutMs`. */
export function exited(child: ChildProcess, timeoutMs: number): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve, reject) => {
    const t = setTimeout(
      () => reject(new Error(`pid ${child.pid} still running after ${timeoutMs} ms`)),
      timeoutMs,
    );
    child.once("exit", (code) => {
      clearTimeout(t);
      resolve(code);
    });
  });
}

/** Busy CPU time of the whole machine (all cores, /proc/stat), µs. */
export function machineBusyUs(): number {
  const f = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal …
  const busy = f[0]! + f[1]! + f[2]! + f[5]! + f[6]! + f[7]!;
  return (busy * 1e6) / CLK_TCK;
}

/** Event-loop lag figures of the bridge from its Prometheus endpoint (prom-client resets them per scrape). */
export async function bridgeLoopLagMs(url: string): Promise<{ p99: number; max: number }> {
  try {
    const text = await (await fetch(`${url}/metrics`)).text();
    const get = (name: string) => Number(text.match(new RegExp(`^${name} ([0-9.eE+-]+)`, "m"))?.[1]) * 1000;
    // The bridge's paced wake-ups' lateness since the last scrape (src/default-metrics.ts).
    return {
      p99: get("nodejs_eventloop_lag_p99_seconds"),
      max: get("nodejs_eventloop_lag_max_seconds"),
    };
  } catch {
    return { p99: Number.NaN, max: Number.NaN };
  }
}

/**
 * How late the bridge's RTP send thread woke for its ticks (p99 and max since it started, 1 ms
 * buckets), from /metrics: the sender's own part of the agent packets' lateness. NaN without SIP.
 */
export async function bridgeRtpSendLateMs(
  url: string,
): Promise<{ p99: number; max: number; realtime: boolean }> {
  try {
    const text = await (await fetch(`${url}/metrics`)).text();
    const get = (q: string) =>
      Number(
        text.match(new RegExp(`^voice_bridge_rtp_send_late_ms\\{quantile="${q}"\\} ([0-9.eE+-]+)`, "m"))?.[1],
      );
    const realtime = /^voice_bridge_rtp_send_realtime 1$/m.test(text);
    return { p99: get("0.99"), max: get("1"), realtime };
  } catch {
    return { p99: Number.NaN, max: Number.NaN, realtime: false };
  }
}
