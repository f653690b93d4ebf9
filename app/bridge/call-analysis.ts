// The bridge's side of the post-call analysis: ask the agent's chat model (E1, JSON mode) about
// the ended call, file the result as the record's last event, count it on /metrics.

import { analyseCall } from "../../src/agents/analysis.ts";
import type { CallAgent } from "../../src/agents/call-agent.ts";
import type { SvcClient } from "../../src/api/client.ts";
import type { Logger } from "../../src/core/log.ts";
import { recordFromEvents, type TranscriptStore } from "../../src/records/call-record.ts";
import type { BridgeMetrics } from "../metrics/bridge-metrics.ts";

export interface AnalysisDeps {
  client: SvcClient;
  transcripts: TranscriptStore;
  metrics: BridgeMetrics;
  log: Logger;
}

export async function runAnalysis(agent: CallAgent, callId: string, d: AnalysisDeps): Promise<void> {
  const plan = agent.analysis;
  if (!plan) return;
  // The whole call (a long one's first turns are read back from the store).
  const record = await d.transcripts.read(callId).catch((err: Error) => {
    d.log.error(
      { err, callId },
      "call analysis: the store could not give the call's turns; analysing the latest",
    );
    return recordFromEvents(d.transcripts.recent(callId));
  });
  if (!record) return;
  const started = performance.now();
  const analysis = await analyseCall(plan, record.turns, async (messages, signal) => {
    const answer = await d.client.chat.create(
      { model: agent.models.chatModel, messages, response_format: { type: "json_object" } },
      { signal },
    );
    return answer.choices[0]?.message.content ?? "";
  });
  d.transcripts.append(callId, { type: "analysis", at: new Date().toISOString(), analysis });
  d.metrics.analyses.inc({ status: analysis.status });
  const ms = Math.round(performance.now() - started);
  if (analysis.status === "done") d.log.info({ callId, agent: agent.name, ms, analysis }, "call analysed");
  else d.log.warn({ callId, agent: agent.name, ms, error: analysis.error }, "call analysis failed");
}
