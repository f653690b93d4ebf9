// What happens once a call has ended: its recording is filed with its record, the agent's
// analysis (when it has one) goes into the record, and then the record is reported.
import { access } from "node:fs/promises";
import { resolve } from "node:path";
import type { CallAgent } from "../../src/agents/call-agent.ts";
import type { SvcClient } from "../../src/api/client.ts";
import type { Logger } from "../../src/core/log.ts";
import { recordFromEvents } from "../../src/records/call-record.ts";
import { callReport } from "../../src/records/reports/report.ts";
import type { RecordingTransport } from "../../src/session/call-recording.ts";
import type { BridgeMetrics } from "../metrics/bridge-metrics.ts";
import { runAnalysis } from "./call-analysis.ts";
import type { Records } from "./records.ts";

export interface EndOfCall {
  /** A session ended: its recording (if any) is closed and filed, its analysis made, then its report sent. */
  sessionEnded(agent: CallAgent, callId: string, recording: RecordingTransport | undefined): void;
  /** A placed call ended without a session (unanswered, a machine): its report is made here. */
  unansweredEnded(callId: string): Promise<void>;
}

export interface EndOfCallDeps {
  readonly records: Records;
  readonly client: SvcClient;
  readonly metrics: BridgeMetrics;
  readonly log: Logger;
}

export function endOfCall(d: EndOfCallDeps): EndOfCall {
  const { store, transcripts, reporter, instance } = d.records;
  // An ended call's whole record for its report; if the store cannot give back what memory let
  // go of, the report is made from what memory holds (said in the log) rather than not at all.
  const wholeRecord = (callId: string) =>
    transcripts.read(callId).catch((err: Error) => {
      d.log.error(
        { err, callId },
        "call report: the store could not give the call's first events; reporting the latest",
      );
      return recordFromEvents(transcripts.recent(callId));
    });
  return {
    sessionEnded(agent, callId, recording) {
      const filed = recording ? recordingFiled(recording) : Promise.resolve(undefined);
      void filed.then((path) => path && store.setRecording(callId, path));
      // The analysis (when the agent has one) goes into the record before the report is made.
      const analysed = agent.analysis
        ? runAnalysis(agent, callId, { client: d.client, transcripts, metrics: d.metrics, log: d.log })
        : Promise.resolve();
      if (!reporter) return;
      const report = analysed.then(async () => {
        const record = await wholeRecord(callId);
        const made = record && callReport(record, { instance });
        if (made) store.setReport(made.reportId, "pending", undefined, callId);
        return made;
      });
      void reporter.submit(
        Promise.all([report, filed]).then(([r, path]) => (r && path ? { ...r, recordingPath: path } : r)),
      );
    },
    async unansweredEnded(callId) {
      const record = reporter && (await wholeRecord(callId));
      const made = reporter && record && callReport(record, { instance });
      if (!made) return;
      store.setReport(made.reportId, "pending", undefined, callId);
      void reporter.submit(Promise.resolve(made));
    },
  };
}

/**
 * Where a call's recording is once its file is complete: closed (a write failure was logged), then
 * looked for once, for the record and the report alike; undefined when no file was written.
 */
async function recordingFiled(recording: RecordingTransport): Promise<string | undefined> {
  await recording.close().catch(() => {});
  return (await fileExists(recording.path)) ? resolve(recording.path) : undefined;
}

/** Whether a file is there, asked without blocking the loop that carries the calls' audio. */
function fileExists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
