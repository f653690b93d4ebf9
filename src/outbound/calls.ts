// The calls the bridge places: POST /calls and `voice-bridge dial` come here. Each call is checked
// against the limits, gets its record at once (direction outbound), is dialled by its carrier's
// bridge, and ends up either unanswered (busy, no answer, failed, canceled: recorded and ended
// here) or answered: then answering-machine detection decides whether the agent's session starts
// (a person) or the call is hung up or a voicemail message left (a machine).

import { randomBytes } from "node:crypto";
import type { CallAgent } from "../agents/call-agent.ts";
import type { AgentDirectory } from "../agents/directory.ts";
import { nowIn, TemplateRenderer } from "../agents/templates.ts";
import type { OutboundConfig } from "../config/outbound.ts";
import type { Logger } from "../core/log.ts";
import type { AmdResult, CallEvent, CallEventSink, DialOutcome } from "../records/call-record.ts";
import type { CallEnd } from "../records/outcome.ts";
import type { SpeechSynthesizer } from "../session/services.ts";
import type { CallInfo, CallTransport } from "../session/transport.ts";
import { AnsweringMachineDetector } from "./amd.ts";
import { synthesize } from "./amd-gate.ts";
import { AnsweredCall } from "./answered-call.ts";
import type { CarrierAmd, DialEvents, Dialer, DialFailure, PlacedCall } from "./dialer.ts";
import { ivrAgent } from "./ivr.ts";
import type { DialLimits } from "./limits.ts";
import { type DialBody, parseDialBody } from "./request.ts";

export interface OutboundDeps {
  readonly config: () => OutboundConfig;
  /** Each carrier's dialer, when configured (read per call: SIP starts after the HTTP routes). */
  readonly dialers: () => { readonly sip?: Dialer | undefined; readonly twilio?: Dialer | undefined };
  readonly agents: () => AgentDirectory;
  /** The bridge is shutting down: no new calls. */
  readonly draining?: () => boolean;
  /** A number the bridge never dials (the do-not-call list), asked at dial time. */
  readonly doNotCall?: (to: string) => boolean;
  readonly limits: DialLimits;
  readonly events: CallEventSink;
  /** Starts the agent's session on an answered call; `onEnd` hears that it ended (the session records how). */
  readonly startSession: (
    transport: CallTransport,
    agent: CallAgent,
    onEnd: () => void,
  ) => { end(end: CallEnd): void };
  /** The agent's voice, for a voicemail message. */
  readonly tts: (agent: CallAgent) => SpeechSynthesizer;
  readonly log: Logger;
  /** A call that ended without a session has its call-end recorded (its report is made then). */
  readonly onEnded?: (callId: string) => void;
  /** Outcomes for metrics. */
  readonly onOutcome?: (via: string, outcome: DialOutcome) => void;
}

export type PlaceResult =
  | { ok: true; callId: string }
  | { ok: false; status: 400 | 403 | 429 | 503; field?: string; message: string; retryAfterS?: number };

interface LiveCall {
  readonly placed: PlacedCall;
  transport?: CallTransport;
  /** Answered, and who answered still being decided (no session yet). */
  answered?: AnsweredCall;
  session?: { end(end: CallEnd): void };
}

/** The body of the voicemail message when neither the request nor the config has one. */
const DEFAULT_MESSAGE =
  "Hello, this is an automated call. Sorry we missed you; we will try again later. Goodbye.";

export class OutboundCalls {
  readonly #d: OutboundDeps;
  readonly #live = new Map<string, LiveCall>();

  constructor(deps: OutboundDeps) {
    this.#d = deps;
  }

  get live(): number {
    return this.#live.size;
  }

  /** A request as it came (POST /calls' JSON, the library's dial()): checked field by field, then placed. */
  request(raw: unknown): PlaceResult {
    const parsed = parseDialBody(raw);
    if (!parsed.ok) return { ok: false, status: 400, field: parsed.field, message: parsed.message };
    return this.place(parsed.body);
  }

  place(body: DialBody): PlaceResult {
    const accepted = this.#accept(body);
    if (!accepted.ok) return accepted;
    const { dialer, directory, agentName } = accepted;
    const config = this.#d.config();
    const callId = `out-${randomBytes(10).toString("hex")}`;
    const from = body.from ?? (body.via === "sip" ? config.sip.from : config.twilio.from);
    const info: CallInfo = {
      callId,
      transport: body.via,
      ...(from ? { from } : {}),
      to: body.to,
      params: { direction: "outbound" },
    };
    const log = this.#d.log.child({ callId, via: body.via, to: body.to });
    const agent = directory.forOutbound(agentName, info, body.variables ?? {}, log)!;
    const placedAt = performance.now();
    const record = (event: CallEvent) => this.#d.events.append(callId, event);
    record({
      type: "call-start",
      at: new Date().toISOString(),
      callId,
      transport: body.via,
      ...(from ? { from } : {}),
      to: body.to,
      agent: agent.name,
      direction: "outbound",
    });
    const policy = body.machineDetection ?? config.machineDetection;
    const ringTimeoutS = body.ringTimeoutS ?? config.ringTimeoutS;
    log.info({ agent: agent.name, ringTimeoutS, machineDetection: policy }, "outbound: placing a call");
    let settled = false;
    const finish = (reason: string, outcome?: DialOutcome) => {
      if (settled) return;
      settled = true;
      this.#live.delete(callId);
      this.#d.limits.release();
      if (outcome) this.#d.onOutcome?.(body.via, outcome);
      return reason;
    };
    // Calls that end without a session (unanswered, machines) end here; their report too.
    const endRecord = (end: CallEnd, since: number) => {
      record({
        type: "call-end",
        at: new Date().toISOString(),
        reason: end.reason,
        outcome: end.outcome,
        durationMs: Math.round(performance.now() - since),
      });
      this.#d.onEnded?.(callId);
    };
    // Early media (SIP 180/183 with SDP) goes to a detector of its own, never to the session.
    let earlyAudio: AnsweringMachineDetector | undefined;
    const earlyMediaMs = () => Math.round(earlyAudio?.earlyMs ?? 0);
    const dialled = (outcome: DialOutcome, extra: { reason?: string; amd?: AmdResult } = {}) =>
      record({
        type: "dial",
        at: new Date().toISOString(),
        outcome,
        ...extra,
        ...(earlyMediaMs() > 0 ? { earlyMediaMs: earlyMediaMs() } : {}),
      });
    let carrier: ((amd: CarrierAmd) => void) | undefined;
    let decided = false;
    let early: CarrierAmd | undefined;
    const events: DialEvents = {
      carrierAmd: (amd) => {
        if (carrier) carrier(amd);
        else early = amd;
      },
      ringing: (detail) => log.info({ detail }, "outbound: ringing"),
      earlyMedia: (rate) => {
        const detector = new AnsweringMachineDetector(rate);
        earlyAudio = detector;
        log.info("outbound: early media: heard by the detector, not the agent");
        return (frame) => detector.hearEarly(frame, (frame.length / rate) * 1000);
      },
      failed: (f: DialFailure) => {
        dialled(f.outcome, { reason: f.reason });
        endRecord({ outcome: "unanswered", reason: `unanswered: ${f.outcome} (${f.reason})` }, placedAt);
        finish(f.reason, f.outcome);
        log.info(
          { outcome: f.outcome, reason: f.reason, earlyMediaMs: earlyMediaMs() },
          "outbound: call not answered",
        );
      },
      answered: (transport) => {
        const live = this.#live.get(callId);
        if (live) live.transport = transport;
        const answeredAt = performance.now();
        log.info(
          { afterMs: Math.round(answeredAt - placedAt), earlyMediaMs: earlyMediaMs() },
          "outbound: answered",
        );
        if (policy === "off") {
          dialled("human", { amd: { result: "unknown", decidedAfterMs: 0 } });
          this.#d.onOutcome?.(body.via, "human");
          const session = this.#d.startSession(transport, agent, () => finish("ended"));
          if (live) live.session = session;
          return;
        }
        const message = this.#voicemailMessage(body, info, from, config.voicemailMessage, log);
        const menuAgent = ivrAgent(agent);
        const call = new AnsweredCall({
          transport,
          policy,
          byCarrier: placed.carrierAmd === true,
          detector: earlyAudio,
          message,
          synthesize: (text) => synthesize(this.#d.tts(agent), transport, text),
          record,
          dialled: (outcome, amd) => {
            if (!decided) this.#d.onOutcome?.(body.via, outcome);
            decided = true;
            dialled(outcome, { amd });
          },
          startSession: (gate) => {
            const session = this.#d.startSession(gate, agent, () => finish("ended"));
            if (live) live.session = session;
          },
          ...(menuAgent
            ? {
                startIvr: (gate: CallTransport) => {
                  const session = this.#d.startSession(gate, menuAgent, () => finish("ended"));
                  if (live) live.session = session;
                },
              }
            : {}),
          ended: (end) => {
            endRecord(end, answeredAt);
            finish(end.reason);
          },
          log,
        });
        if (live) live.answered = call;
        carrier = (c) => call.carrier(c);
        if (early) call.carrier(early);
      },
    };
    const placed = dialer(
      {
        callId,
        to: body.to,
        ...(from ? { from } : {}),
        ringTimeoutS,
        machineDetection: policy !== "off",
        log,
      },
      events,
    );
    if (!settled) this.#live.set(callId, { placed });
    return { ok: true, callId };
  }

  /** Why a request cannot be placed now, or what places it (a limit slot is taken then). */
  #accept(
    body: DialBody,
  ):
    | Extract<PlaceResult, { ok: false }>
    | { ok: true; dialer: Dialer; directory: AgentDirectory; agentName: string } {
    if (this.#d.draining?.())
      return {
        ok: false,
        status: 503,
        message: "the bridge is shutting down: no new calls",
        retryAfterS: 30,
      };
    if (this.#d.doNotCall?.(body.to))
      return {
        ok: false,
        status: 403,
        field: "to",
        message: `${body.to} is on the do-not-call list (campaigns.doNotCallFile): the bridge never dials it`,
      };
    const dialer = this.#d.dialers()[body.via];
    if (!dialer)
      return {
        ok: false,
        status: 400,
        field: "via",
        message:
          body.via === "sip"
            ? "SIP dialling is not configured: set SIP_OUTBOUND_PROXY (outbound.sip.proxy), and SIP must be on"
            : "Twilio dialling is not configured: set TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, PUBLIC_URL and TWILIO_OUTBOUND_FROM",
      };
    const agentName = body.agent ?? "default";
    const directory = this.#d.agents();
    if (!directory.get(agentName))
      return {
        ok: false,
        status: 400,
        field: "agent",
        message: `no agent named "${agentName}" (agents: ${directory.names.join(", ")})`,
      };
    const verdict = this.#d.limits.take();
    if (!verdict.ok)
      return { ok: false, status: 429, message: verdict.why, retryAfterS: verdict.retryAfterS };
    return { ok: true, dialer, directory, agentName };
  }

  /** The voicemail message of a call (the request's, else the configured one), its variables filled in. */
  #voicemailMessage(
    body: DialBody,
    info: CallInfo,
    from: string | undefined,
    configured: string | undefined,
    log: Logger,
  ): string {
    return new TemplateRenderer(
      {
        caller: from,
        called: body.to,
        transport: body.via,
        params: info.params,
        vars: body.variables ?? {},
        now: nowIn("UTC", new Date()),
      },
      (name) => log.info({ variable: name }, `{{${name}}} has no value on this call: left empty`),
    ).render(body.voicemailMessage ?? configured ?? DEFAULT_MESSAGE);
  }

  /**
   * The bridge is stopping: calls still deciding who answered are hung up and filed as the bridge's
   * end (their sessions, once started, are ended with the bridge's other live calls).
   */
  shutDown(): void {
    for (const live of this.#live.values()) if (!live.session) live.answered?.shutDown();
  }

  /** DELETE /calls/:id: cancels a ringing call or hangs up an answered one; false when not ours. */
  cancel(callId: string): "canceled" | "hung-up" | undefined {
    const live = this.#live.get(callId);
    if (!live) return undefined;
    if (live.transport) {
      const end: CallEnd = { outcome: "agent_hangup", reason: "agent: hung up by DELETE /calls" };
      void live.transport.hangUp(end.reason);
      live.session?.end(end);
      return "hung-up";
    }
    live.placed.cancel();
    return "canceled";
  }
}
