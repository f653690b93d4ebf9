// Call control for one session: what happens to the call as a whole rather than to a turn.
// The model's hang-up and transfer requests, re-prompts of a silent caller and the goodbye
// after too many, the call's time limit, and keypad digits gathered into one message.
// The session owns the conversation; this asks it for what it needs through `ControlHost`.

import type { Clock, TimerHandle } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import type { CallEnd } from "../records/outcome.ts";
import type { AgentTurn, AgentTurnResult } from "./agent-turn.ts";
import type { SessionConfig } from "./config.ts";
import type { CallTransport } from "./transport.ts";

export type CallAction = NonNullable<AgentTurnResult["action"]>;

export interface ControlHost {
  /** Someone is speaking, the agent is speaking, or a turn is in the works. */
  busy(): boolean;
  /** Speaks fixed words through the same path as replies (not preemptively). */
  speakFixed(text: string): AgentTurn;
  end(end: CallEnd): void;
  note(text: string): void;
  /** The transfer failed: the model should tell the caller (a system line, then a reply). */
  transferFailed(target: string, why: string): void;
  /** Keypad digits, gathered, as one caller message. */
  digits(digits: string): void;
}

export class CallControl {
  readonly #host: ControlHost;
  readonly #transport: CallTransport;
  readonly #clock: Clock;
  readonly #config: SessionConfig;
  readonly #log: Logger;
  #repromptTimer: TimerHandle | undefined;
  #reprompts = 0;
  #maxTimer: TimerHandle | undefined;
  #dtmf = "";
  #dtmfTimer: TimerHandle | undefined;
  #closed = false;
  #acting = false;

  constructor(opts: {
    host: ControlHost;
    transport: CallTransport;
    clock: Clock;
    config: SessionConfig;
    log: Logger;
  }) {
    this.#host = opts.host;
    this.#transport = opts.transport;
    this.#clock = opts.clock;
    this.#config = opts.config;
    this.#log = opts.log;
  }

  /**
   * True while we hang up or transfer: the transport may report the end of the call it was asked
   * to end before the request returns, and the session should name the end for what it asked.
   */
  get acting(): boolean {
    return this.#acting;
  }

  /** Starts the call's time limit. */
  start(): void {
    this.#maxTimer = this.#clock.setTimeout(
      () =>
        void this.sayAndHangUp(this.#config.goodbyeText, {
          outcome: "max_call_duration",
          reason: "max call duration",
        }),
      this.#config.maxCallMs,
    );
  }

  close(): void {
    this.#closed = true;
    for (const t of [this.#repromptTimer, this.#maxTimer, this.#dtmfTimer]) this.#clock.clearTimeout(t);
  }

  /** The caller spoke: no re-prompt is due, and the count starts again. */
  callerSpoke(): void {
    this.cancelReprompt();
    this.#reprompts = 0;
  }

  cancelReprompt(): void {
    this.#clock.clearTimeout(this.#repromptTimer);
  }

  /** After the agent's turn: if the caller stays silent, ask whether they are still there. */
  scheduleReprompt(): void {
    this.cancelReprompt();
    // A group conversation is not a call to keep alive: silence there is nobody's fault.
    if (this.#closed || this.#config.multiParty || this.#host.busy()) return;
    this.#repromptTimer = this.#clock.setTimeout(() => {
      if (this.#host.busy()) return;
      this.#reprompts += 1;
      if (this.#reprompts > this.#config.maxReprompts)
        void this.sayAndHangUp(this.#config.goodbyeText, {
          outcome: "caller_silent",
          reason: "caller silent",
        });
      else this.#host.speakFixed(this.#config.repromptText);
    }, this.#config.repromptAfterMs);
  }

  async sayAndHangUp(text: string, end: CallEnd): Promise<void> {
    if (this.#closed) return;
    this.#log.info({ reason: end.reason }, "saying goodbye");
    await this.#host.speakFixed(text).done;
    await this.#act(() => this.#transport.hangUp(end.reason)).catch(() => undefined);
    this.#host.end(end);
  }

  /** Runs what the model asked for once its words were heard: hang up, or transfer. */
  async run(action: CallAction): Promise<void> {
    if (action.kind === "end-call") {
      this.#log.info({ reason: action.reason }, "agent hangs up");
      await this.#act(() => this.#transport.hangUp(action.reason)).catch((err: Error) =>
        this.#log.error({ err: err.message }, "hang-up failed"),
      );
      this.#host.end({ outcome: "agent_hangup", reason: `agent: ${action.reason}` });
      return;
    }
    this.#log.info({ target: action.target }, "transferring the call");
    try {
      await this.#act(() => this.#transport.transfer(action.target));
      this.#host.note(`transferred to ${action.target}`);
      this.#host.end({ outcome: "transferred", reason: `transferred to ${action.target}` });
    } catch (err) {
      const why = (err as Error).message;
      this.#log.error({ err: why, target: action.target }, "transfer failed");
      this.#host.note(`transfer to ${action.target} failed: ${why}`);
      this.#host.transferFailed(action.target, why);
    }
  }

  async #act(request: () => Promise<void>): Promise<void> {
    this.#acting = true;
    try {
      await request();
    } finally {
      this.#acting = false;
    }
  }

  /** A keypad digit: sent to the model after a pause (`dtmfGapMs`), or at once on '#'. */
  digit(digit: string): void {
    this.#log.info({ digit }, "caller pressed a key");
    this.#dtmf += digit;
    this.#clock.clearTimeout(this.#dtmfTimer);
    this.cancelReprompt();
    const send = () => {
      const digits = this.#dtmf;
      this.#dtmf = "";
      if (digits) this.#host.digits(digits);
    };
    if (digit === "#") send();
    else this.#dtmfTimer = this.#clock.setTimeout(send, this.#config.dtmfGapMs);
  }
}
