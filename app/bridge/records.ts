// Where the bridge keeps its calls: every call's record in the store (SQLite, or PostgreSQL shared
// by several bridges), the live and recent ones in memory, the recordings, and the end-of-call
// reports POSTed to the operator's server; and how /calls reads them.
import type { Config } from "../../src/config/config.ts";
import type { Clock } from "../../src/core/clock.ts";
import type { Logger } from "../../src/core/log.ts";
import { TranscriptStore } from "../../src/records/call-record.ts";
import { type AttemptResult, CallReporter } from "../../src/records/reports/reporter.ts";
import { ReportSpool } from "../../src/records/reports/spool.ts";
import type { CallStore } from "../../src/records/store/call-store.ts";
import { instanceName, openCallStore } from "../../src/records/store/open.ts";
import { CallRecorder } from "../../src/session/call-recording.ts";
import type { CallReader } from "../http/call-routes.ts";

export interface Records {
  /** This bridge's name in the records and the live feed. */
  readonly instance: string;
  readonly store: CallStore;
  /** The records of live and recently ended calls, in memory. */
  readonly transcripts: TranscriptStore;
  /** Records the calls of agents that record, when `agent.recordingDir` is set. */
  readonly recorder: CallRecorder | undefined;
  /** Sends each ended call's report, when `callReports.url` is set. */
  readonly reporter: CallReporter | undefined;
}

/** Opens the store, then starts the recorder and the reporter (the reports left from the last run go out). */
export async function openRecords(
  config: Config,
  clock: Clock,
  log: Logger,
  onReportAttempt: ((result: AttemptResult) => void) | undefined,
): Promise<Records> {
  const instance = instanceName(config);
  const store = await openCallStore(config, log);
  const transcripts = new TranscriptStore(store, config.store.keepEnded);
  const recorder = callRecorder(config, clock, log);
  const reporter = callReporter(config, store, clock, log, onReportAttempt);
  if (reporter) await reporter.start();
  return { instance, store, transcripts, recorder, reporter };
}

function callRecorder(config: Config, clock: Clock, log: Logger): CallRecorder | undefined {
  if (!config.agent.recordingDir) return undefined;
  const recorder = new CallRecorder(
    config.agent.recordingDir,
    clock,
    (err, callId) =>
      log.error({ err, callId }, "call recording: write failed (reported once per call); the call goes on"),
    log,
  );
  log.info(
    { dir: recorder.dir },
    "recording calls: <callId>.wav (-2, -3, … if the id was recorded before), caller left, agent right",
  );
  return recorder;
}

function callReporter(
  config: Config,
  store: CallStore,
  clock: Clock,
  log: Logger,
  onReportAttempt: ((result: AttemptResult) => void) | undefined,
): CallReporter | undefined {
  const reports = config.callReports;
  if (!reports.url || !reports.secret) return undefined;
  const dir = reports.dir ?? `${config.local.dataDir}/call-reports`;
  const reporter = new CallReporter({
    url: reports.url,
    secret: reports.secret,
    spool: new ReportSpool(dir),
    clock,
    log: log.child({ component: "reports" }),
    onAttempt: (result) => {
      const state = result.kind === "retry" ? "pending" : result.kind;
      store.setReport(result.reportId, state, result.status);
      onReportAttempt?.(result);
    },
  });
  log.info(
    { url: reports.url, dir },
    "call reports: each ended call is POSTed to the URL, kept in the directory until delivered",
  );
  return reporter;
}

/** The records as GET /calls reads them. */
export function callReader({ instance, store, transcripts, recorder }: Records): CallReader {
  return {
    // A call in memory (live, or just ended) is read from there: the store may be a write behind
    // (a long call's first events memory let go of are read back from the store).
    async get(callId) {
      const here = await transcripts.read(callId);
      return here ? { ...here, instance } : store.get(callId);
    },
    list: (query) => store.list(query),
    async recordingOf(callId) {
      const stored = await store.get(callId).catch(() => undefined);
      return stored?.recording?.path ?? recorder?.pathOf(callId);
    },
    recording: recorder !== undefined,
  };
}
