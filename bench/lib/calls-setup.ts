// The processes every call-load benchmark (`calls`, `soak`) runs and how they are started: the
// local service with the benchmark-only synthetic engines, the bridge as deployed (`voice-bridge
// start`, info logs as JSON lines to a file, signed Twilio requests, SVC_BASE_URL pointing at the
// service, closed by its own token), its transport's target and warm-up; and the caller's side of
// a call: a quiet line with speech placed on it.
import type { ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { programToken } from "../../app/bridge-token.ts";
import type { BenchTransport } from "./calls-bridge-ends.ts";
import { spawnNode, waitForLine } from "./calls-procs.ts";
import {
  type BenchOutbound,
  type BenchTarget,
  type BenchTls,
  benchBridge,
  TWILIO_TOKEN,
} from "./calls-transports.ts";

export const BENCH_KEY = "bench-key";

export interface BenchSetupOptions {
  transport: BenchTransport;
  /** The bridge's RTP range with --transport sip. */
  rtpPorts: string;
  /** With --transport sip: callers offer SDES-SRTP and the bridge answers with it. */
  srtp?: boolean;
  /** With --transport sip: the calls' SIP over TLS to the bridge's TLS port, with this certificate. */
  tls?: BenchTls;
  /** The bridge places the calls (`--outbound`) to a callee on this port. */
  outbound?: BenchOutbound;
  /**
   * Names this run's logs and config (`service-<run>.log`, `bridge-<run>.log`, `bridge-<run>.yaml`)
   * when one invocation starts the processes more than once in the same `dir`.
   */
  run?: string;
  /** Where logs, configs and data go. */
  dir: string;
  /** The bridge's config file (YAML). */
  bridgeConfig: string;
  /** Node flags for the bridge only (profiling, --trace-gc); env BENCH_CALLS_BRIDGE_FLAGS is added. */
  bridgeFlags: string[];
  /** What the bridge process runs (default `app/cli.ts start`, the bridge as deployed). */
  bridgeEntry?: string[];
  /** Environment of the bridge beyond what every bench bridge gets. */
  bridgeEnv?: NodeJS.ProcessEnv;
  /** Every process started is pushed here as soon as it is spawned (to be stopped on any exit). */
  children: ChildProcess[];
  nice?: number;
  /** The local service's nice value, when it differs from the bridge's. */
  serviceNice?: number;
  /** Environment of the local service beyond the benchmark's (its latency profile). */
  serviceEnv?: NodeJS.ProcessEnv;
  /** The local service's log level (default warn; debug logs every request it receives). */
  serviceLogLevel?: string;
}

export interface BenchProcesses {
  svc: ChildProcess;
  /** The local service's log (JSON lines). */
  svcLog: string;
  bridge: ChildProcess;
  bridgeUrl: string;
  bridgeLog: string;
  /** The bridge's config file, for a benchmark that rewrites it and reloads. */
  configPath: string;
  /** The bridge's token (GET /calls, POST /admin/reload), undefined with BRIDGE_TOKEN=off. */
  bridgeToken: string | undefined;
  target: BenchTarget;
}

/** `name.ext`, or `name-run.ext` for a named run. */
function runFile(dir: string, name: string, ext: string, run: string | undefined): string {
  return join(dir, run ? `${name}-${run}.${ext}` : `${name}.${ext}`);
}

export async function startBenchProcesses(o: BenchSetupOptions): Promise<BenchProcesses> {
  const svcLog = runFile(o.dir, "service", "log", o.run);
  const svc = spawnNode(
    ["app/cli.ts", "service", "--port", "0", "--engines", "synthetic", "--data-dir", join(o.dir, "svc")],
    {
      ...process.env,
      SVC_LOCAL_API_KEYS: BENCH_KEY,
      LOG_LEVEL: o.serviceLogLevel ?? "warn",
      LOG_FORMAT: "json",
      ...o.serviceEnv,
    },
    svcLog,
    "serviceNice" in o ? o.serviceNice : o.nice,
  );
  o.children.push(svc);
  const svcUrl = (await waitForLine(svcLog, /listening on (http:\/\/\S+)/, 30_000, svc))[1]!;

  const bridgeLog = runFile(o.dir, "bridge", "log", o.run);
  const configPath = runFile(o.dir, "bridge", "yaml", o.run);
  writeFileSync(configPath, o.bridgeConfig);
  const transport = benchBridge(o.transport, o.rtpPorts, o.srtp ?? false, o.tls, o.outbound);
  const dataDir = join(o.dir, "bridge");
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOST: "127.0.0.1",
    PORT: "0",
    SVC_BASE_URL: svcUrl,
    SVC_API_KEY: BENCH_KEY,
    SVC_LOCAL_DATA_DIR: dataDir,
    TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
    LOG_LEVEL: "info",
    LOG_FORMAT: "json",
    VOICE_BRIDGE_CONFIG: configPath,
    ...transport.env,
    ...o.bridgeEnv,
  };
  delete env.TWILIO_ACCOUNT_SID;
  delete env.PUBLIC_URL;
  const flags = [
    ...o.bridgeFlags,
    ...(process.env.BENCH_CALLS_BRIDGE_FLAGS ?? "").split(" ").filter(Boolean),
  ];
  const bridge = spawnNode([...flags, ...(o.bridgeEntry ?? ["app/cli.ts", "start"])], env, bridgeLog, o.nice);
  o.children.push(bridge);
  const bridgeUrl = (
    await waitForLine(bridgeLog, /"url":"(http:\/\/127\.0\.0\.1:\d+)"[^\n]*bridge listening/, 60_000, bridge)
  )[1]!;
  const target = await transport.ready(bridgeUrl, bridgeLog, bridge);
  // Read as any program on this machine reads it: BRIDGE_TOKEN, else the file the bridge made.
  const bridgeToken = programToken(env.BRIDGE_TOKEN, dataDir);
  return { svc, svcLog, bridge, bridgeUrl, bridgeLog, configPath, bridgeToken, target };
}

/** `seconds` of a quiet line (about -70 dBFS, below the VAD's energy gate), 8 kHz. */
export function quietLine(seconds: number): Int16Array {
  const out = new Int16Array(Math.round(seconds * 8000));
  let seed = 12345;
  for (let i = 0; i < out.length; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    out[i] = ((seed >>> 16) % 21) - 10;
  }
  return out;
}

/** Writes a caller timeline (raw little-endian Int16) where load generators read it. */
export function writeTimeline(path: string, timeline: Int16Array): void {
  writeFileSync(path, new Uint8Array(timeline.buffer, timeline.byteOffset, timeline.byteLength));
}

/** The bridge's live calls (GET /readyz), -1 if it does not answer. */
export async function readyCalls(url: string): Promise<number> {
  try {
    const body = (await (await fetch(`${url}/readyz`)).json()) as { calls?: number };
    return body.calls ?? -1;
  } catch {
    return -1;
  }
}
