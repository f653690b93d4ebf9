// When the agent is chosen. A transport that can keep a call ringing (SIP before its 200, Twilio
// before the voice webhook's TwiML) asks first, so a rejection is a real refusal (603, <Reject>)
// and the webhook's wait is heard as ringing; the pick is then kept for the call's media, which
// follows. Transports that are connected at once (AudioSocket, browser, Discord) pick on arrival.
import type { Logger } from "../core/log.ts";
import type { Admission, CallInfo } from "../session/transport.ts";
import type { AgentDirectory, AgentPick } from "./directory.ts";

/** How long a pick made before the answer waits for its media (Twilio's WebSocket), ms. */
const KEEP_MS = 60_000;

export class CallAdmission {
  readonly #directory: () => AgentDirectory;
  readonly #log: Logger;
  readonly #picks = new Map<string, { pick: Promise<AgentPick>; timer: NodeJS.Timeout }>();

  /** `directory` is read per call: a reload swaps it, and calls already picked keep theirs. */
  constructor(directory: () => AgentDirectory, log: Logger) {
    this.#directory = directory;
    this.#log = log;
  }

  /** Chooses the agent of a call not yet answered; its media will find the choice by call id. */
  async admit(info: CallInfo): Promise<Admission> {
    const pick = this.#pick(info);
    this.#forget(info.callId);
    const timer = setTimeout(() => this.#picks.delete(info.callId), KEEP_MS);
    timer.unref();
    this.#picks.set(info.callId, { pick, timer });
    const p = await pick;
    return p.kind === "agent" ? { accept: true } : { accept: false, reason: p.reason };
  }

  /** The agent of a call whose media has started: the one admitted, else chosen now. */
  take(info: CallInfo): Promise<AgentPick> {
    const kept = this.#picks.get(info.callId);
    this.#forget(info.callId);
    return kept?.pick ?? this.#pick(info);
  }

  #forget(callId: string): void {
    const kept = this.#picks.get(callId);
    if (!kept) return;
    clearTimeout(kept.timer);
    this.#picks.delete(callId);
  }

  async #pick(info: CallInfo): Promise<AgentPick> {
    const log = this.#log.child({ callId: info.callId });
    try {
      const pick = await this.#directory().pick(info, log);
      if (pick.kind === "reject")
        log.info(
          { agent: pick.agent, reason: pick.reason, ...pick.timing },
          "call rejected at its start (by the call-start webhook or the agent's onCallStart)",
        );
      else
        log.info(
          {
            agent: pick.agent.name,
            chosenBy: pick.agent.chosenBy,
            from: info.from,
            to: info.to,
            ...pick.timing,
          },
          `agent "${pick.agent.name}" takes the call`,
        );
      return pick;
    } catch (err) {
      // Never expected; a call without an agent cannot go on.
      log.error({ err }, "choosing the call's agent failed");
      return { kind: "reject", reason: "no agent could be chosen", agent: "default", timing: { pickMs: 0 } };
    }
  }
}
