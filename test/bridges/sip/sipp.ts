// Running SIPp (the sip-tester package) against the server: every port it would otherwise take
// by default (5060, media 6000, control 8888) is replaced by a free one (helpers/free-port.ts), so test files
// can run in parallel.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { freePort } from "../../helpers/free-port.ts";

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
