// runScenarios(): each scenario a real call through the real bridge, placed by the Twilio
// simulator, the caller's lines said into it, and its expectations checked against the bridge's
// record of the call. Each set runs on a bridge of its own, `parallel` sets at a time (one by
// default), its scenarios one call at a time; results come in the sets' order whatever order they
// finish in. `voice-bridge test` is this with files and a printed report.
import { type Logger, silentLogger } from "../../../src/core/log.ts";
import type { CallRecord } from "../../../src/records/call-record.ts";
import {
  CallRejectedError,
  newCallSid,
  type SimEvent,
  type SimResult,
  type SimulateCallOptions,
  simulateCall,
} from "../../../tools/twilio-sim/simulate.ts";
import { CALLER_VOICE, callerTurns, lineText } from "./caller.ts";
import { check, type ExpectationResult } from "./expectations.ts";
import { observe } from "./observed.ts";
import { type PreparedSet, prepareSet } from "./prepare.ts";
import type { Scenario, ScenarioSet } from "./scenario.ts";
import { startTestBridge, type TestBridge } from "./test-bridge.ts";

export interface ScenarioResult {
  /** The scenario file (as given), or the name of a set given in code. */
  file: string;
  scenario: string;
  passed: boolean;
  durationMs: number;
  /** Each expectation, in the file's order. */
  expectations: ExpectationResult[];
  /** Why the call could not be made or followed (the expectations were then not checked). */
  error?: string;
  /** The call as the bridge recorded it: "agent: …" and "caller: …" lines (the caller as recognized). */
  transcript: string[];
  /** The bridge's record of the call (as GET /calls/:id gives it); none for a rejected call. */
  record?: CallRecord;
}

export interface RunScenariosOptions {
  /** The config file of sets that give none of their own (the CLI's --config). */
  config?: string;
  /**
   * The environment (default process.env). Its SVC_* variables choose the service as the bridge
   * takes them: SVC_BASE_URL and SVC_API_KEY a hosted one; else the embedded local service, with
   * its engine settings (SVC_CHAT_ENGINE, SVC_CHAT_UPSTREAM, …).
   */
  env?: Readonly<Record<string, string | undefined>>;
  /** Where the relative paths of sets given in code are read from (default: the working directory). */
  dir?: string;
  /** The bridges' logger (default: silent). */
  log?: Logger;
  /** Told each scenario's result as soon as it is known, in the sets' order. */
  onResult?: (result: ScenarioResult) => void;
  /**
   * How many sets run at once, each on its own bridge (default 1). More finish sooner on a machine
   * with cores to spare; each bridge loads its own embedded engines.
   */
  parallel?: number;
}

/** After the caller hangs up, how long the bridge may take to file the call (its analysis included), ms. */
const FILING_MS = 15_000;

function transcriptOf(record: CallRecord | undefined): string[] {
  return (record?.turns ?? []).map((t) =>
    t.role === "assistant" ? `agent: ${t.generated}` : `caller: ${t.text || "(nothing recognized)"}`,
  );
}

/** The call's record once the bridge has filed it (analysis included), or what it has by then. */
function filed(
  tb: TestBridge,
  callSid: string,
): { record: () => Promise<CallRecord | undefined>; stop: () => void } {
  let resolveEnd: (r: CallRecord) => void = () => {};
  const ended = new Promise<CallRecord>((r) => {
    resolveEnd = r;
  });
  const listener = (r: CallRecord) => {
    if (r.callId === callSid) resolveEnd(r);
  };
  tb.bridge.on("call-end", listener);
  return {
    async record() {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<undefined>((r) => {
        timer = setTimeout(() => r(undefined), FILING_MS);
      });
      try {
        return (await Promise.race([ended, late])) ?? tb.bridge.record(callSid);
      } finally {
        clearTimeout(timer);
      }
    },
    stop: () => tb.bridge.off("call-end", listener),
  };
}

/** The simulated call, to its end; undefined when the bridge rejected it before answering. */
async function placeCall(opts: SimulateCallOptions): Promise<SimResult | undefined> {
  try {
    return await simulateCall(opts);
  } catch (err) {
    if (err instanceof CallRejectedError) return undefined;
    throw err;
  }
}

async function runScenario(tb: TestBridge, p: PreparedSet, scenario: Scenario): Promise<ScenarioResult> {
  const started = performance.now();
  const base = { file: p.name, scenario: scenario.name };
  const callSid = newCallSid();
  const voice = p.set.callerVoice ?? CALLER_VOICE;
  const filing = filed(tb, callSid);
  try {
    const says = await callerTurns(scenario.caller, p.audio, tb.speak, voice);
    const followed = tb.rest.follow(callSid);
    if (scenario.variables)
      tb.variables.set(
        callSid,
        Object.fromEntries(Object.entries(scenario.variables).map(([k, v]) => [k, String(v)])),
      );
    const events: SimEvent[] = [];
    const sim = await placeCall({
      url: tb.bridge.url,
      authToken: tb.twilio.authToken,
      accountSid: tb.twilio.accountSid,
      callSid,
      ...(scenario.from !== undefined ? { from: scenario.from } : {}),
      ...(scenario.to !== undefined ? { to: scenario.to } : {}),
      ...(scenario.params ? { params: scenario.params } : {}),
      says,
      ended: followed.ended,
      maxSeconds: scenario.maxSeconds,
      fetchTranscript: false,
      onEvent: (e) => events.push(e),
    });
    const record = sim ? await filing.record() : undefined;
    const transfers = followed.updates.flatMap((u) => (u.dial !== undefined ? [u.dial] : []));
    const call = observe(record, sim, events, scenario.caller.map(lineText), transfers);
    const expectations: ExpectationResult[] = [];
    for (const e of scenario.expect) expectations.push(await check(e, call, tb.judge));
    return {
      ...base,
      passed: expectations.every((e) => e.passed),
      durationMs: Math.round(performance.now() - started),
      expectations,
      transcript: transcriptOf(record),
      ...(record ? { record } : {}),
    };
  } catch (err) {
    return {
      ...base,
      passed: false,
      durationMs: Math.round(performance.now() - started),
      expectations: [],
      error: (err as Error).message,
      transcript: transcriptOf(tb.bridge.record(callSid)),
    };
  } finally {
    filing.stop();
    tb.rest.forget(callSid);
    tb.variables.delete(callSid);
  }
}

/**
 * Runs scenario files (paths) or sets given in code, and resolves with a result per scenario.
 * Every set is read and checked before the first call: a mistake in one rejects with a
 * ScenarioFileError naming the file, the place in it and what is wrong.
 */
export async function runScenarios(
  sources: ReadonlyArray<string | ScenarioSet>,
  options: RunScenariosOptions = {},
): Promise<ScenarioResult[]> {
  const parallel = options.parallel ?? 1;
  if (!Number.isInteger(parallel) || parallel < 1)
    throw new RangeError(`parallel: a whole number of sets at once, 1 or more; got ${parallel}`);
  const env = options.env ?? process.env;
  const log = options.log ?? silentLogger;
  const dir = options.dir ?? process.cwd();
  const prepared: PreparedSet[] = [];
  for (const source of sources) prepared.push(await prepareSet(source, { config: options.config, dir, env }));
  const results: ScenarioResult[] = [];
  // Each set's results wait until every set before it has told all of its own.
  const waiting = prepared.map((): ScenarioResult[] => []);
  const finished = prepared.map(() => false);
  let head = 0;
  const flush = () => {
    for (; head < prepared.length; head++) {
      for (const result of waiting[head]!.splice(0)) {
        results.push(result);
        options.onResult?.(result);
      }
      if (!finished[head]) return;
    }
  };
  const runSet = async (i: number) => {
    await runPreparedSet(prepared[i]!, env, log, (result) => {
      waiting[i]!.push(result);
      flush();
    });
    finished[i] = true;
    flush();
  };
  let next = 0;
  const worker = async () => {
    while (next < prepared.length) await runSet(next++);
  };
  await Promise.all(Array.from({ length: Math.min(parallel, prepared.length) }, worker));
  return results;
}

/** One set on a bridge of its own: its scenarios one call at a time, each result told to `done`. */
async function runPreparedSet(
  p: PreparedSet,
  env: Readonly<Record<string, string | undefined>>,
  log: Logger,
  done: (result: ScenarioResult) => void,
): Promise<void> {
  let tb: TestBridge;
  try {
    tb = await startTestBridge(p, env, log);
  } catch (err) {
    const error = `the bridge did not start: ${(err as Error).message}`;
    for (const s of p.set.scenarios)
      done({
        file: p.name,
        scenario: s.name,
        passed: false,
        durationMs: 0,
        expectations: [],
        error,
        transcript: [],
      });
    return;
  }
  try {
    for (const scenario of p.set.scenarios) done(await runScenario(tb, p, scenario));
  } finally {
    await tb.close();
  }
}
