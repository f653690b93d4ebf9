// Each call's session: the agent's, on the call's transport (recorded and watched by the console
// from outside when so configured), counted while it lasts, handed to the end of call when it ends.
import type { CallAdmission } from "../../src/agents/admission.ts";
import type { CallAgent } from "../../src/agents/call-agent.ts";
import type { Config } from "../../src/config/config.ts";
import type { Clock } from "../../src/core/clock.ts";
import type { Logger } from "../../src/core/log.ts";
import type { CallEnd } from "../../src/records/outcome.ts";
import { CallSession } from "../../src/session/call-session.ts";
import type { LineLevels } from "../../src/session/line-level.ts";
import type { SessionServices } from "../../src/session/services.ts";
import type { SpeechDetectorFactory } from "../../src/session/speech-detector.ts";
import type { CallInfo, CallTransport, DialPerson } from "../../src/session/transport.ts";
import { sileroDetectorFactory } from "../../src/session/vad-detector.ts";
import { WatchedTransport, watchServices } from "../console/call-activity.ts";
import type { LiveFeed } from "../console/live-feed.ts";
import type { BridgeMetrics } from "../metrics/bridge-metrics.ts";
import type { RequestHeaders, Tracing } from "../tracing/tracing.ts";
import { conversationConfig } from "./discord-prompts.ts";
import type { EndOfCall } from "./end-of-call.ts";
import type { Records } from "./records.ts";

/** Runs the agent's session on a call; an outbound call's `onEnd` hears that it ended. */
export type StartSession = (
  transport: CallTransport,
  agent: CallAgent,
  outbound?: { onEnd: () => void },
) => { end(end: CallEnd): void };

export interface SessionDeps {
  readonly config: Config;
  readonly clock: Clock;
  readonly log: Logger;
  readonly metrics: BridgeMetrics;
  readonly records: Records;
  readonly feed: LiveFeed | undefined;
  readonly servicesFor: (agent: CallAgent, requestHeaders?: RequestHeaders) => SessionServices;
  /** The calls' traces, when tracing is on. */
  readonly tracing: Tracing | undefined;
  readonly createDetector: SpeechDetectorFactory;
  readonly endOfCall: EndOfCall;
  /** The live sessions: each is added as it starts and removed as it ends. */
  readonly live: Set<CallSession>;
  readonly draining: () => boolean;
  /** A warm transfer's call to the person, on the calls whose carrier can place one (warm-transfer.ts). */
  readonly dialPerson?: (info: CallInfo) => DialPerson | undefined;
  /** Each transport's callers reach the bridge at their own usual level: each line is learned on its own. */
  readonly lines: LineLevels;
}

/** Each session's voice activity detector, made from one loaded model. */
export function speechDetectors(metrics: BridgeMetrics, log: Logger): Promise<SpeechDetectorFactory> {
  return sileroDetectorFactory(
    // 16-bit samples at 16 kHz: 32 bytes a millisecond.
    { onSkip: (ms) => metrics.shed("vad_backlog", ms * 32) },
    log,
  );
}

/** Inbound calls: each gets the agent the admission picks, or is refused. */
export function answerCalls(
  admission: CallAdmission,
  startSession: StartSession,
): (transport: CallTransport) => void {
  return (callTransport) => {
    void admission.take(callTransport.info).then((pick) => {
      if (pick.kind === "reject") {
        // A voice channel is not a call to refuse: the bot stays in it and says nothing.
        if (callTransport.info.transport !== "discord") void callTransport.hangUp(pick.reason);
        return;
      }
      startSession(callTransport, pick.agent);
    });
  };
}

export function sessionStarter(d: SessionDeps): StartSession {
  const { records, feed, metrics, live, log, lines } = d;
  return (callTransport, agent, outbound) => {
    if (d.draining()) {
      log.warn({ callId: callTransport.info.callId }, "refusing a call while draining");
      void callTransport.hangUp("bridge is shutting down");
      outbound?.onEnd();
      return { end: () => {} };
    }
    const callId = callTransport.info.callId;
    // The recording wraps the transport, so the session records without knowing it; the console
    // watches the same way, from outside.
    const recording = agent.recording ? records.recorder?.record(callTransport) : undefined;
    const activity = feed?.activitySink(callId);
    const recorded = recording ?? callTransport;
    const transport = activity ? new WatchedTransport(recorded, activity) : recorded;
    const tracer = d.tracing?.call({
      callId,
      agent: agent.name,
      transport: callTransport.info.transport,
      direction: outbound ? "outbound" : "inbound",
    });
    const services = d.servicesFor(agent, tracer?.requestHeaders);
    const { transcripts } = records;
    let current = agent;
    const session = new CallSession({
      transport,
      services: activity ? watchServices(services, activity) : services,
      createSpeechDetector: d.createDetector,
      clock: d.clock,
      config: conversationConfig(agent, d.config, transport.info),
      log: log.child({ agent: agent.name, ...tracer?.logFields }),
      // An outbound call's record started when it was placed: the session's own call-start is not repeated.
      transcripts: metrics.tap(
        outbound ? { append: (id, e) => e.type !== "call-start" && transcripts.append(id, e) } : transcripts,
      ),
      onTurnMetrics: (m) => metrics.observeTurn(m),
      onSpeculation: (sp) => metrics.observeSpeculation(sp),
      trace: tracer?.trace,
      line: lines.for(transport.info.transport),
      dialPerson: d.dialPerson?.(transport.info),
      // The agents of the call's handoffs: from the directory that chose the first, with its variables.
      handoff: (name) => {
        const next = current.handoffTo?.(name);
        if (!next) return undefined;
        current = next;
        const nextServices = d.servicesFor(next, tracer?.requestHeaders);
        return {
          config: conversationConfig(next, d.config, transport.info),
          services: activity ? watchServices(nextServices, activity) : nextServices,
        };
      },
      onEnd: (end) => {
        tracer?.ended(end);
        // The analysis and the report are the agent's that had the call last.
        d.endOfCall.sessionEnded(current, transport.info.callId, recording);
        live.delete(session);
        outbound?.onEnd();
        metrics.activeCalls.dec();
        metrics.calls.inc({ transport: transport.info.transport, outcome: end.outcome });
      },
    });
    live.add(session);
    metrics.activeCalls.inc();
    metrics.agentCalls.inc({ agent: agent.name });
    session.start();
    return session;
  };
}
