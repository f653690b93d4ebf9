// Running SIPp (the sip-tester package) against the server: every port it would otherwise take
// by default (5060, media 6000, control 8888) is replaced by a free ephemeral one, so test files
// can run in parallel.
import { spawn } from "node:child_process";
import { createSocket } from "node:dgram";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";

/**
 * Ports are drawn from below the kernel's ephemeral range (32768–60999 on Linux): no socket is
 * given one of these unasked. One drawn from that range (bind to port 0) was free when checked,
 * then handed to another test's socket before SIPp bound it ("Unable to bind remote control
 * socket", exit 254).
 */
const PORTS_FROM = 20_000;
const PORTS_TO = 32_000;

/**
 * A port free right now on 127.0.0.1 for UDP and TCP alike (SIPp's main socket is TCP with -t t1;
 * a port some TCP connection holds, on a busy machine, makes it exit with "Address already in
 * use"). `even`: it and port+2 free for UDP, for SIPp's media sockets.
 */
export async function freePort(even = false): Promise<number> {
  for (;;) {
    let port = PORTS_FROM + Math.floor(Math.random() * (PORTS_TO - PORTS_FROM));
    if (even) port -= port % 2;
    if (!(await udpBindable(port)) || !(await tcpBindable(port))) continue;
    if (!even || (await udpBindable(port + 2))) return port;
  }
}

async function tcpBindable(port: number): Promise<boolean> {
  const server = createServer();
  const ok = await new Promise<boolean>((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => resolve(true));
  });
  if (ok) await new Promise((r) => server.close(r));
  return ok;
}

async function udpBindable(port: number): Promise<boolean> {
  const s = createSocket("udp4");
  const ok = await new Promise<boolean>((resolve) => {
    s.once("error", () => resolve(false));
    s.bind(port, "127.0.0.1", () => resolve(true));
  });
  if (ok) s.close();
  return ok;
}

export interface SippResult {
  readonly code: number | null;
  readonly output: string;
  /** SIPp's -trace_err file: why calls failed. */
  readonly errors: string;
  /** SIPp's working directory: its error file (errors.log) and any -trace_stat file named relative to it. */
  readonly dir: string;
}

export interface SippRun {
  /** -sf (a scenario file) or -sn (a built-in scenario). */
  readonly scenario: { file: string } | { builtin: string };
  readonly target: string;
  readonly args?: readonly string[];
  /** Run SIPp with these extra options, e.g. ["-t", "t1"]. */
  readonly timeoutS?: number;
  /** Aborting it kills SIPp (a test's clean-up when it fails half-way). */
  readonly signal?: AbortSignal;
}

export async function runSipp(run: SippRun): Promise<SippResult> {
  const dir = mkdtempSync(join(tmpdir(), "sipp-"));
  const errFile = join(dir, "errors.log");
  const scenario = "file" in run.scenario ? ["-sf", run.scenario.file] : ["-sn", run.scenario.builtin];
  const timeoutS = run.timeoutS ?? 60;
  const args = [
    ...scenario,
    run.target,
    "-i",
    "127.0.0.1",
    "-bind_local",
    "-p",
    String(await freePort()),
    "-mp",
    String(await freePort(true)),
    "-cp",
    String(await freePort()),
    "-nostdin",
    "-timeout",
    `${timeoutS}s`,
    "-trace_err",
    "-error_file",
    errFile,
    ...(run.args ?? []),
  ];
  const child = spawn("sipp", args, {
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe"],
    ...(run.signal ? { signal: run.signal, killSignal: "SIGKILL" as const } : {}),
  });
  if (run.signal) child.on("error", () => {}); // the abort's AbortError: "close" follows
  let output = "";
  child.stdout.on("data", (d: Buffer) => {
    output = (output + d.toString()).slice(-20_000);
  });
  child.stderr.on("data", (d: Buffer) => {
    output = (output + d.toString()).slice(-20_000);
  });
  const kill = setTimeout(() => child.kill("SIGKILL"), (timeoutS + 30) * 1000);
  const code = await new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
  clearTimeout(kill);
  const errors = existsSync(errFile) ? readFileSync(errFile, "utf8").slice(0, 4000) : "";
  return { code, output: output.slice(-3000), errors, dir };
}

/** SIPp's own built-in scenario (e.g. uac_pcap) dumped with -sd, media paths pointed at the package's pcaps. */
export async function dumpScenario(name: string): Promise<string> {
  const child = spawn("sipp", ["-sd", name], { stdio: ["ignore", "pipe", "ignore"] });
  let xml = "";
  child.stdout.on("data", (d: Buffer) => {
    xml += d.toString();
  });
  await new Promise((resolve) => child.on("close", resolve)); // -sd exits 99
  const file = join(mkdtempSync(join(tmpdir(), "sipp-sd-")), `${name}.xml`);
  writeFileSync(file, xml.replaceAll("pcap/", "/usr/share/sip-tester/"));
  return file;
}

/** SIPp exits 0 only when every call went as its scenario says; otherwise its errors are shown. */
export function expectAllCalls(r: SippResult): void {
  expect(r.code, `SIPp failed (exit ${r.code})\n${r.errors}\n${r.output}`).toBe(0);
}
