// `voice-bridge call`: the simulator from the command line. Reads the WAV files, runs one
// call, writes what the agent said, prints the transcript and the timings.
import { readFileSync, writeFileSync } from "node:fs";
import { basename } from "node:path";
import { stereoToMono } from "../../codecs/pcm.ts";
import { encodeWav, parseWav } from "../../codecs/wav.ts";
import { formatReport } from "./report.ts";
import { type SimAudio, type SimEvent, type SimulateCallOptions, simulateCall } from "./simulate.ts";

export interface CallCommandOptions {
  url: string;
  wav?: string | undefined;
  say?: string[] | undefined;
  out?: string | undefined;
  /** Write caller (left) and agent (right) as a stereo --out. */
  both?: boolean | undefined;
  authToken?: string | undefined;
  /** The bridge's token, to read the call's transcript from GET /calls/:id. */
  bridgeToken?: string | undefined;
  dtmf?: string | undefined;
  maxSeconds?: number | undefined;
  verbose?: boolean | undefined;
  /** The caller's and the called number, and the call's parameters (routing, variables). */
  from?: string | undefined;
  to?: string | undefined;
  params?: Record<string, string> | undefined;
  /** Turn-taking patience of the simulated caller (defaults of simulateCall otherwise). */
  timing?: Pick<SimulateCallOptions, "replyGapMs" | "noReplyMs" | "hangUpAfterMs">;
  /** Where the report goes (default stdout). */
  print?: (text: string) => void;
}

export function readAudio(file: string): SimAudio {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(readFileSync(file));
  } catch (err) {
    throw new Error(`${file}: ${(err as Error).message}`);
  }
  return audioOfWav(bytes, file);
}

/** A WAV file's audio as the caller's (mono: a stereo file's channels mixed); errors name `file`. */
export function audioOfWav(bytes: Uint8Array, file: string): SimAudio {
  let info: ReturnType<typeof parseWav>;
  try {
    info = parseWav(bytes);
  } catch (err) {
    throw new Error(`${file}: ${(err as Error).message}`);
  }
  let samples = info.samples;
  if (info.channels === 2) samples = stereoToMono(samples);
  else if (info.channels !== 1)
    throw new Error(`${file}: ${info.channels} channels; mono or stereo expected`);
  return { samples, rate: info.sampleRate, label: basename(file) };
}

/** `k=v` items of --param → the call's parameters. */
export function parseParams(items: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of items) {
    const eq = item.indexOf("=");
    if (eq <= 0) throw new Error(`--param: "${item}" is not NAME=VALUE (e.g. account=A-1001)`);
    out[item.slice(0, eq).trim()] = item.slice(eq + 1);
  }
  return out;
}

/** "1@4.5,2@6" → digit 1 at 4.5 s, digit 2 at 6 s. */
export function parseDtmf(spec: string): Array<{ digit: string; atMs: number }> {
  return spec
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((item) => {
      const m = /^([0-9*#A-D])@(\d+(?:\.\d+)?)$/i.exec(item);
      if (!m) throw new Error(`--dtmf: "${item}" is not DIGIT@SECONDS (e.g. 1@4.5)`);
      return { digit: m[1]!.toUpperCase(), atMs: Math.round(Number(m[2]) * 1000) };
    });
}

function interleave(left: Int16Array, right: Int16Array): Int16Array {
  const n = Math.max(left.length, right.length);
  const out = new Int16Array(2 * n);
  for (let i = 0; i < n; i++) {
    out[2 * i] = left[i] ?? 0;
    out[2 * i + 1] = right[i] ?? 0;
  }
  return out;
}

/** Runs the call and prints its report; returns the process exit code. */
export async function runCallCommand(opts: CallCommandOptions): Promise<number> {
  const caller = opts.wav ? readAudio(opts.wav) : undefined;
  const says = (opts.say ?? []).map(readAudio);
  const dtmf = opts.dtmf ? parseDtmf(opts.dtmf) : [];
  const onEvent = opts.verbose
    ? (e: SimEvent) =>
        process.stderr.write(`${secsOf(e.atMs)} ${e.kind}${e.detail !== undefined ? ` ${e.detail}` : ""}\n`)
    : undefined;
  const result = await simulateCall({
    url: opts.url,
    ...(opts.authToken ? { authToken: opts.authToken } : {}),
    ...(opts.bridgeToken ? { bridgeToken: opts.bridgeToken } : {}),
    ...(caller ? { caller } : {}),
    says,
    dtmf,
    ...(opts.from ? { from: opts.from } : {}),
    ...(opts.to ? { to: opts.to } : {}),
    ...(opts.params ? { params: opts.params } : {}),
    ...(opts.maxSeconds !== undefined ? { maxSeconds: opts.maxSeconds } : {}),
    ...(onEvent ? { onEvent } : {}),
    ...opts.timing,
  });
  if (opts.out) {
    const wav = opts.both
      ? encodeWav(interleave(result.callerAudio, result.agentAudio), result.rate, 2)
      : encodeWav(result.agentAudio, result.rate);
    writeFileSync(opts.out, wav);
  }
  const print = opts.print ?? ((text: string) => process.stdout.write(text));
  print(`${formatReport(result)}\n`);
  const { timing, faults } = await serviceConditions(opts.url);
  if (timing)
    print(
      `  the bridge's local service ran at ${timing === "none" ? "its own speed" : `${timing} (SVC_LOCAL_LATENCY)`}\n`,
    );
  if (faults && faults !== "none") print(`  and played failures: ${faults} (SVC_LOCAL_FAULTS)\n`);
  if (opts.out) print(`  agent audio${opts.both ? " (left: caller, right: agent)" : ""}: ${opts.out}\n`);
  return 0;
}

/** The timing and failures the bridge's embedded service plays (its /readyz says), if it runs one and says. */
async function serviceConditions(url: string): Promise<{ timing?: string; faults?: string }> {
  try {
    const res = await fetch(new URL("/readyz", url), { signal: AbortSignal.timeout(2000) });
    const body = (await res.json()) as { localService?: { timing?: unknown; faults?: unknown } };
    const { timing, faults } = body.localService ?? {};
    return {
      ...(typeof timing === "string" ? { timing } : {}),
      ...(typeof faults === "string" ? { faults } : {}),
    };
  } catch {
    return {}; // an older bridge, or one on a hosted service: nothing to say
  }
}

function secsOf(ms: number): string {
  return `[${(ms / 1000).toFixed(2).padStart(7)} s]`;
}
