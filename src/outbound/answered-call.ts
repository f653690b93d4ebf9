// An outbound call once answered: who answered is decided (the bridge's detector through the gate,
// or the carrier's verdict), then a person gets the agent's session, a machine is hung up on or
// left the voicemail message at its cue. Everything it decides goes into the call's record; a
// call that ends here (a machine, or the far end gone before the decision) is ended here too.

import type { MachineDetection } from "../config/outbound.ts";
import type { Logger } from "../core/log.ts";
import type { AmdResult, CallEvent, DialOutcome } from "../records/call-record.ts";
import { BRIDGE_SHUTDOWN, type CallEnd } from "../records/outcome.ts";
import type { CallTransport } from "../session/transport.ts";
import type { AnsweringMachineDetector } from "./amd.ts";
import { AmdGate, type synthesize } from "./amd-gate.ts";
import type { CarrierAmd } from "./dialer.ts";

export interface AnsweredCallDeps {
  readonly transport: CallTransport;
  readonly policy: Exclude<MachineDetection, "off">;
  /** The carrier decides (Twilio's asyncAmd); else the bridge's detector. */
  readonly byCarrier: boolean;
  /** The detector that heard the call's early media, if it had any. */
  readonly detector?: AnsweringMachineDetector | undefined;
  /** The voicemail message, templated. */
  readonly message: string;
  readonly synthesize: (text: string) => ReturnType<typeof synthesize>;
  readonly record: (event: CallEvent) => void;
  readonly dialled: (outcome: DialOutcome, amd: AmdResult) => void;
  /** A person: the agent's session takes the gate. */
  readonly startSession: (transport: CallTransport) => void;
  /**
   * A machine whose greeting ended without a beep (a phone menu), for an agent with an `ivr` goal:
   * the agent's session in menu mode takes the gate (ivr.ts). Absent: such a machine is a voicemail.
   */
  readonly startIvr?: (transport: CallTransport) => void;
  /** The call ended here (a machine, or gone before the decision). */
  readonly ended: (end: CallEnd) => void;
  readonly log: Logger;
}

/** Longest wait for the carrier's verdict after the answer, ms (Twilio's own limit is 30 s by default). */
const CARRIER_AMD_WAIT_MS = 35_000;

export class AnsweredCall {
  readonly #d: AnsweredCallDeps;
  readonly #gate: AmdGate;
  #amd: AmdResult | undefined;
  #audio: ReturnType<typeof synthesize> | undefined;
  /** We are hanging up (a machine): the far end's end that follows is ours. */
  #hangingUp = false;
  #over = false;
  /** The far end has gone (hung up, media lost). */
  #gone = false;
  #carrierTimer: NodeJS.Timeout | undefined;

  constructor(d: AnsweredCallDeps) {
    this.#d = d;
    const by = d.byCarrier ? "twilio" : "bridge";
    this.#gate = new AmdGate(
      d.transport,
      {
        decided: (result, atMs, why) => {
          clearTimeout(this.#carrierTimer);
          this.#amd = { result, decidedAfterMs: Math.round(atMs), by };
          d.dialled(result, this.#amd);
          d.log.info(
            {
              result,
              afterMs: this.#amd.decidedAfterMs,
              why,
              ...(d.detector?.early ? { early: d.detector.early } : {}),
            },
            "outbound: answering-machine detection decided",
          );
          if (result === "human") d.startSession(this.#gate);
          // A menu or a voicemail: its greeting's end (a beep or not) tells, so the call waits for it.
          else if (d.policy === "hangup" && !d.startIvr)
            void this.#hangUp("agent: answering machine, hung up");
          else if (d.policy === "hangup") return;
          else {
            // Synthesized while the greeting plays, so the message starts right at the beep's end.
            this.#audio = d.synthesize(d.message);
            this.#audio.catch((err: Error) =>
              d.log.warn({ err: err.message }, "outbound: voicemail message synthesis failed"),
            );
          }
        },
        cue: (atMs, beepEndMs, why) => {
          if (this.#amd?.result !== "machine" || this.#hangingUp) return;
          if (beepEndMs === undefined && d.startIvr) {
            d.log.info({ why }, "outbound: a phone menu answered (no beep): the agent works it");
            d.record({ type: "note", at: new Date().toISOString(), text: `phone menu answered (${why})` });
            d.startIvr(this.#gate);
            return;
          }
          if (d.policy === "hangup") {
            void this.#hangUp("agent: answering machine, hung up");
            return;
          }
          if (!this.#audio) return;
          this.#amd = {
            ...this.#amd,
            ...(beepEndMs !== undefined ? { beepEndedAtMs: Math.round(beepEndMs) } : {}),
            messageStartedAtMs: Math.round(atMs),
          };
          d.dialled("machine", this.#amd);
          void this.#leaveMessage(why);
        },
        ended: (reason) => {
          clearTimeout(this.#carrierTimer);
          this.#gone = true;
          if (this.#hangingUp) return;
          if (!this.#amd)
            d.dialled("human", { result: "unknown", decidedAfterMs: Math.round(this.#gate.elapsedMs), by });
          this.#end({ outcome: "caller_hangup", reason });
        },
      },
      !d.byCarrier,
      ...(d.detector ? [d.detector] : []),
    );
    // Twilio's detection gives up within its own timeout; past that the agent speaks.
    if (d.byCarrier)
      this.#carrierTimer = setTimeout(
        () => this.#gate.carrierDecided("human", "no verdict from the carrier in time"),
        CARRIER_AMD_WAIT_MS,
      );
  }

  /** The carrier's verdict (Twilio's AnsweredBy). */
  carrier(c: CarrierAmd): void {
    if (c.result !== "machine") {
      this.#gate.carrierDecided("human", `carrier: ${c.detail}`);
      return;
    }
    this.#gate.carrierDecided("machine", `carrier: ${c.detail}`);
    // DetectMessageEnd: a machine_end_* verdict comes once the greeting is over.
    if (c.detail.startsWith("machine_end"))
      this.#gate.carrierCue(`carrier: ${c.detail}`, c.detail === "machine_end_beep");
  }

  /** The bridge is stopping while who answered is still being decided: hung up, filed as the bridge's end. */
  shutDown(): void {
    if (this.#over || this.#hangingUp) return;
    this.#hangingUp = true;
    void this.#d.transport.hangUp(BRIDGE_SHUTDOWN.reason).catch(() => {});
    this.#end(BRIDGE_SHUTDOWN);
  }

  #end(end: CallEnd): void {
    if (this.#over) return;
    this.#over = true;
    this.#d.ended(end);
  }

  /** We hang up (a machine, or its message left): the agent ended the call. */
  async #hangUp(reason: string): Promise<void> {
    this.#hangingUp = true;
    await this.#d.transport.hangUp(reason).catch(() => {});
    this.#end({ outcome: "agent_hangup", reason });
  }

  /** Plays the message, waits until it was heard (or the far end went), hangs up. */
  async #leaveMessage(why: string): Promise<void> {
    const { transport, message, log } = this.#d;
    this.#hangingUp = true;
    let chunks: Awaited<ReturnType<typeof synthesize>>;
    try {
      chunks = await this.#audio!;
    } catch {
      await this.#hangUp("agent: voicemail message failed");
      return;
    }
    for (const c of chunks) transport.play(c);
    const end = transport.queuedMs();
    log.info({ why, ms: Math.round(end - transport.playedMs()) }, "outbound: leaving the voicemail message");
    const heardAll = await new Promise<boolean>((resolve) => {
      const check = setInterval(() => {
        if (transport.playedMs() >= end - 1 || this.#gone) {
          clearInterval(check);
          resolve(!this.#gone);
        }
      }, 50);
    });
    this.#d.record({
      type: "assistant",
      at: new Date().toISOString(),
      generated: message,
      heard: heardAll ? message : "",
      interrupted: !heardAll,
      toolCalls: [],
      metrics: {},
    });
    await this.#hangUp("agent: left a voicemail message");
  }
}
