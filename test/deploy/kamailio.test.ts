// Scale-out as deployed: the real Kamailio (Debian's package) with deploy/kamailio/kamailio.cfg in
// front of three real bridge processes (`voice-bridge start`, each with its embedded local service
// on the synthetic engines so the calls cost little CPU), and SIPp placing calls through it:
//   a) calls spread over every instance, all succeed;
//   b) one instance gets SIGTERM mid-run: its calls finish, new ones go elsewhere (its 503s make
//      Kamailio fail over and mark it down), no call fails, and it exits once its calls ended;
//   c) another instance is SIGKILLed mid-run: only its own calls fail, and once Kamailio has marked
//      it down (probe or failover) no INVITE is sent to it;
//   d) the bridge's own BYE (its media timeout: SIPp sends no RTP) reaches the caller through Kamailio.
// The bridges advertise an address Kamailio cannot reach (SIP_PUBLIC_IP in TEST-NET-1, as behind a
// cloud's NAT), so a call's later requests only reach them through the config's NAT mapping; and
// Kamailio advertises one too (SIP_ADVERTISE), so it must know that address in Route as its own.
// Everything on 127.0.0.1; waits are on log lines, never on durations.
import { type ChildProcess, spawn } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exited, ROOT, spawnNode, stopProcess, waitForLine } from "../../bench/lib/calls-procs.ts";
import { runSipp, type SippResult } from "../bridges/sip/sipp.ts";
import { freePort } from "../helpers/free-port.ts";
import { until } from "../helpers/until.ts";

const CFG = join(ROOT, "deploy/kamailio/kamailio.cfg");
const SCENARIO = join(import.meta.dirname, "uac-proxied.xml");
const HUNG_UP_SCENARIO = join(import.meta.dirname, "uac-hung-up.xml");
/** What the bridges write in Contact and SDP: unroutable, like a public address behind NAT. */
const PUBLIC_IP = "192.0.2.1";
/** What Kamailio writes in Record-Route and Via: unroutable too. */
const KAMAILIO_PUBLIC_IP = "192.0.2.2";
/** Longer than the calls of a) to c), which send no RTP either. */
const MEDIA_TIMEOUT_S = 8;
/** Kamailio's OPTIONS probe period and its no-answer timeout, short for the test. */
const PROBE_INTERVAL_S = 1;
const FR_TIMER_MS = 2000;
/** Calls per second SIPp places, and how long each lasts. */
const RATE = 5;
const CALL_MS = 4000;

interface Instance {
  readonly name: string;
  readonly child: ChildProcess;
  readonly log: string;
  readonly sipPort: number;
  readonly uri: string;
}

interface LogEntry {
  level: number;
  msg: string;
  callId?: string;
  calls?: number;
  reason?: string;
}

let dir: string;
const bridges: Instance[] = [];
let kamailio: ChildProcess | undefined;
let kamailioLog: string;
let kamailioPort: number;
const abort = new AbortController();
/** What the test saw, printed at the end (the figures of the report). */
const observed: Record<string, unknown> = {};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-kamailio-"));
  const started = await Promise.all(["a", "b", "c"].map((name, i) => startInstance(name, 33_000 + i * 200)));
  bridges.push(...started);
  await startKamailio();
}, 120_000);

afterAll(async () => {
  abort.abort();
  await Promise.all(bridges.map((b) => stopProcess(b.child, 5000)));
  if (kamailio?.pid !== undefined && kamailio.exitCode === null && kamailio.signalCode === null) {
    const gone = exited(kamailio, 5000).catch(() => undefined);
    kamailio.kill("SIGTERM");
    if ((await gone) === undefined) {
      // Its worker processes are in its process group (spawned detached).
      try {
        process.kill(-kamailio.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
  if (Object.keys(observed).length > 0)
    process.stdout.write(`kamailio scale-out: ${JSON.stringify(observed)}\n`);
  if (process.env.KEEP_TEST_DIR) process.stdout.write(`logs kept in ${dir}\n`);
  else rmSync(dir, { recursive: true, force: true });
});

/** A bridge as `voice-bridge start` runs it: SIP on a port of its own, RTP from its own range. */
async function startInstance(name: string, rtpFrom: number): Promise<Instance> {
  const log = join(dir, `bridge-${name}.log`);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOST: "127.0.0.1",
    PORT: "0",
    SIP_HOST: "127.0.0.1",
    SIP_PORT: "0",
    SIP_PUBLIC_IP: PUBLIC_IP,
    SIP_MEDIA_TIMEOUT_S: String(MEDIA_TIMEOUT_S),
    RTP_PORTS: `${rtpFrom}-${rtpFrom + 199}`,
    SVC_LOCAL_DATA_DIR: join(dir, `data-${name}`),
    SVC_ENGINE_PROFILE: "synthetic",
    AGENT_GREETING: "Hello, you are through to the agent.",
    LOG_LEVEL: "info",
    LOG_FORMAT: "json",
  };
  for (const key of [
    "SVC_BASE_URL",
    "SVC_API_KEY",
    "PUBLIC_URL",
    "DISCORD_TOKEN",
    "DISCORD_SHARDS",
    "AUDIOSOCKET_PORT",
    "VOICE_BRIDGE_CONFIG",
    "CALL_REPORT_URL",
    "AGENT_RECORDING_DIR",
  ])
    delete env[key];
  const child = spawnNode(["app/cli.ts", "start"], env, log);
  const m = await waitForLine(log, /"udpPort":(\d+)[^\n]*"sip: listening"/, 90_000, child);
  const sipPort = Number(m[1]);
  return { name, child, log, sipPort, uri: `sip:127.0.0.1:${sipPort}` };
}

/** Kamailio in the foreground (-DD -E: logs on stderr), with the deployed config and the test's values. */
async function startKamailio(): Promise<void> {
  kamailioPort = await freePort();
  const run = join(dir, "kamailio-run");
  mkdirSync(run);
  const list = join(dir, "dispatcher.list");
  writeFileSync(list, bridges.map((b) => `1 ${b.uri}\n`).join(""));
  const cfg = join(dir, "kamailio.cfg");
  writeFileSync(
    cfg,
    [
      "#!KAMAILIO",
      `#!define SIP_LISTEN udp:127.0.0.1:${kamailioPort}`,
      // Kamailio behind NAT too: its Record-Route and Via name an address nobody can send to.
      `#!define SIP_ADVERTISE ${KAMAILIO_PUBLIC_IP}:${kamailioPort}`,
      `#!define DISPATCHER_LIST "${list}"`,
      `#!define PROBE_INTERVAL_S ${PROBE_INTERVAL_S}`,
      `#!define FR_TIMER_MS ${FR_TIMER_MS}`,
      "#!define FR_INV_TIMER_MS 5000",
      "#!define CHILDREN 2",
      `#!define BRIDGES_PUBLIC_IP "${PUBLIC_IP}"`,
      '#!define BRIDGES_PRIVATE_IP "127.0.0.1"',
      `include_file "${CFG}"`,
      "",
    ].join("\n"),
  );
  kamailioLog = join(dir, "kamailio.log");
  const fd = openSync(kamailioLog, "a");
  kamailio = spawn(
    "kamailio",
    ["-DD", "-E", "-f", cfg, "-Y", run, "-P", join(run, "kamailio.pid"), "-m", "64", "-M", "8"],
    { detached: true, stdio: ["ignore", fd, fd] },
  );
  closeSync(fd);
  await waitForLine(
    kamailioLog,
    new RegExp(`udp: 127\\.0\\.0\\.1 \\[127\\.0\\.0\\.1\\]:${kamailioPort}`),
    30_000,
    kamailio,
  );
}

function entries(b: Instance): LogEntry[] {
  if (!existsSync(b.log)) return [];
  return readFileSync(b.log, "utf8")
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as LogEntry);
}

/** Call-IDs the instance answered, in its log from entry `from` on. */
function answered(b: Instance, from = 0): string[] {
  return entries(b)
    .slice(from)
    .filter((e) => e.msg === "sip: call answered")
    .map((e) => e.callId ?? "");
}

function ended(b: Instance, from = 0): LogEntry[] {
  return entries(b)
    .slice(from)
    .filter((e) => e.msg === "call ended");
}

function kamailioLines(): string[] {
  return readFileSync(kamailioLog, "utf8").split("\n");
}

/**
 * SIPp goes on past an unexpected message instead of aborting the call. Kamailio forwards each
 * message from whichever of its worker processes took it, so a bridge's 180 sent a moment before
 * its 200 can arrive after it; a phone drops such a late provisional (its INVITE transaction is
 * over), where SIPp by default aborts the call and counts it failed.
 */
const LATE_PROVISIONALS_IGNORED = ["-default_behaviors", "all,-abortunexp"];

/**
 * SIPp's UAC through Kamailio: `calls` calls at RATE a second, each CALL_MS long. A request that
 * gets no answer is sent 4 times (over 7.5 s) before its call fails, not SIPp's default 8 (23.5 s):
 * a killed instance's calls' BYEs are answered by no one, and a loopback loses nothing else.
 */
function placeCalls(calls: number, name: string): Promise<SippResult & { stats: SippStats }> {
  const statsFile = join(dir, `sipp-${name}.csv`);
  return runSipp({
    scenario: { file: SCENARIO },
    target: `127.0.0.1:${kamailioPort}`,
    args: ["-r", String(RATE), "-l", "40", "-m", String(calls), "-d", String(CALL_MS)].concat([
      ...LATE_PROVISIONALS_IGNORED,
      "-max_retrans",
      "3",
      "-trace_stat",
      "-stf",
      statsFile,
      "-fd",
      "1",
    ]),
    timeoutS: 120,
    signal: abort.signal,
  }).then((r) => ({ ...r, stats: readStats(statsFile) }));
}

interface SippStats {
  successful: number;
  failed: number;
}

/** The last line of SIPp's -trace_stat file: cumulative counts. */
function readStats(file: string): SippStats {
  const lines = readFileSync(file, "utf8").trim().split("\n");
  const head = lines[0]!.split(";");
  const last = lines.at(-1)!.split(";");
  const col = (name: string) => Number(last[head.indexOf(name)]);
  return { successful: col("SuccessfulCall(C)"), failed: col("FailedCall(C)") };
}

/** The Call-IDs of the calls SIPp counted as failed, from its error file. */
function failedCallIds(r: SippResult): Set<string> {
  const text = readFileSync(join(r.dir, "errors.log"), "utf8");
  return new Set([...text.matchAll(/Call-Id '([^']+)'/gi)].map((m) => m[1]!));
}

describe("N bridges behind Kamailio's dispatcher", () => {
  it("spreads calls over every instance, and every call succeeds", async () => {
    const before = bridges.map((b) => answered(b).length);
    const r = await placeCalls(30, "spread");
    expect(r.code, `SIPp failed (exit ${r.code})\n${r.errors}\n${r.output}`).toBe(0);
    expect(r.stats).toEqual({ successful: 30, failed: 0 });
    const perInstance = bridges.map((b, i) => answered(b).length - before[i]!);
    observed.spread = { calls: 30, failed: r.stats.failed, perInstance };
    for (const n of perInstance) expect(n).toBeGreaterThan(0);
    expect(perInstance.reduce((a, b) => a + b)).toBe(30);
    // Every call ended on the instance that took it, by the caller's BYE routed there.
    for (const b of bridges)
      await until(() => answered(b).length === ended(b).length, `${b.name}'s calls to end`, 30_000);
    for (const b of bridges) expect(ended(b).every((e) => e.reason === "caller hung up")).toBe(true);
  }, 90_000);

  it("SIGTERM mid-run: calls in flight finish, new ones go elsewhere, none fails, the instance exits", async () => {
    const [a] = bridges;
    const mark = bridges.map((b) => entries(b).length);
    const load = placeCalls(40, "sigterm");
    await until(() => answered(a!, mark[0]).length >= 3, "instance a to take calls", 60_000);
    a!.child.kill("SIGTERM");
    const drainAt = await until(
      () => {
        const i = entries(a!).findIndex(
          (e, j) => j >= mark[0]! && e.msg === "sip: draining, refusing new calls",
        );
        return i >= 0 ? i : false;
      },
      "instance a to drain",
      30_000,
    );
    const inFlight = entries(a!)[drainAt]!.calls ?? 0;
    const r = await load;
    expect(r.code, `SIPp failed (exit ${r.code})\n${r.errors}\n${r.output}`).toBe(0);
    expect(r.stats).toEqual({ successful: 40, failed: 0 });
    // The drained instance exits by itself once its last call has ended.
    expect(await exited(a!.child, 60_000)).toBe(0);
    expect(entries(a!).filter((e) => e.level >= 50)).toEqual([]);
    const after = entries(a!).slice(drainAt);
    expect(inFlight).toBeGreaterThan(0);
    expect(after.filter((e) => e.msg === "sip: call answered")).toHaveLength(0);
    expect(after.filter((e) => e.msg === "call ended").map((e) => e.reason)).toEqual(
      Array(inFlight).fill("caller hung up"),
    );
    const lines = kamailioLines();
    expect(lines.some((l) => l.includes(`instance down: ${a!.uri}`))).toBe(true);
    const perInstance = bridges.map((b, i) => answered(b, mark[i]).length);
    observed.sigterm = {
      calls: 40,
      failed: r.stats.failed,
      perInstance,
      inFlightOnDrainedInstance: inFlight,
      refused503ThenFailedOver: lines.filter((l) => l.includes(`failover: ${a!.uri} answered 503`)).length,
    };
    expect(perInstance.reduce((x, y) => x + y)).toBe(40);
  }, 120_000);

  it("SIGKILL mid-run: only that instance's calls fail, and it gets no INVITE once marked down", async () => {
    const [, b, c] = bridges;
    const mark = bridges.map((x) => entries(x).length);
    const load = placeCalls(40, "sigkill");
    await until(() => answered(c!, mark[2]).length >= 3, "instance c to take calls", 60_000);
    c!.child.kill("SIGKILL");
    await exited(c!.child, 10_000);
    const killedAt = Date.now();
    const onC = answered(c!, mark[2]);
    const endedOnC = new Set(ended(c!, mark[2]).map((e) => e.callId));
    const liveOnC = new Set(onC.filter((id) => !endedOnC.has(id)));
    const downLine = `instance down: ${c!.uri}`;
    await until(() => kamailioLines().some((l) => l.includes(downLine)), "Kamailio to mark c down", 30_000);
    const downAfterMs = Date.now() - killedAt;
    const r = await load;
    const failed = failedCallIds(r);
    // Only calls that instance c had when it died fail; every other call succeeds.
    expect(r.stats.failed).toBeGreaterThan(0);
    expect(r.stats.successful + r.stats.failed).toBe(40);
    expect(failed.size).toBe(r.stats.failed);
    for (const id of failed) expect(liveOnC.has(id), `${id} failed but was not on c`).toBe(true);
    // Once down, c gets no INVITE: the dispatcher picks among the others only.
    const lines = kamailioLines();
    const downAt = lines.findIndex((l) => l.includes(downLine));
    const toC = new RegExp(`dispatch: INVITE \\S+ to ${c!.uri.replaceAll(".", "\\.")}( \\(failover\\))?$`);
    expect(lines.slice(downAt).filter((l) => toC.test(l))).toEqual([]);
    const perInstance = bridges.map((x, i) => (x === bridges[0] ? 0 : answered(x, mark[i]).length));
    observed.sigkill = {
      calls: 40,
      failed: r.stats.failed,
      liveOnKilledInstance: liveOnC.size,
      perInstance,
      markedDownAfterMs: downAfterMs,
      invitesThatTimedOutOnKilledThenFailedOver: lines.filter((l) =>
        l.includes(`failover: ${c!.uri} answered 408`),
      ).length,
    };
    expect(b!.child.exitCode).toBeNull();
  }, 120_000);

  it("the bridge's own BYE reaches the caller back through Kamailio", async () => {
    const b = bridges[1]!;
    const mark = entries(b).length;
    const r = await runSipp({
      scenario: { file: HUNG_UP_SCENARIO },
      target: `127.0.0.1:${kamailioPort}`,
      args: ["-r", String(RATE), "-l", "5", "-m", "5", ...LATE_PROVISIONALS_IGNORED],
      timeoutS: 60,
      signal: abort.signal,
    });
    expect(r.code, `SIPp failed (exit ${r.code})\n${r.errors}\n${r.output}`).toBe(0);
    // The bridge ends the call once its BYE is answered: that 200 went the same way back.
    await until(() => ended(b, mark).length >= 5, "b's five calls to end", 30_000);
    expect(ended(b, mark).map((e) => e.reason)).toEqual(Array(5).fill("media timeout"));
    observed.bridgeHangsUp = { calls: 5, byesThatReachedTheCaller: 5 };
  }, 60_000);
});
