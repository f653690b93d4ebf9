// Whether what the bot sends into a voice channel now would leave end-to-end encrypted, read from
// @discordjs/voice's own state at the moment of asking. The library encrypts a packet with DAVE only
// when its session runs protocol version > 0 and davey's group is ready; otherwise it sends the
// packet in clear (DAVESession.encrypt). That is right in a transport-only call (protocol version
// 0: receivers expect clear media) and wrong while the group is being built or rebuilt (receivers
// drop it): then the agent must hold its voice.
import {
  type DAVESession,
  NetworkingStatusCode,
  type VoiceConnection,
  VoiceConnectionStatus,
} from "@discordjs/voice";
import type { Clock } from "../../src/core/clock.ts";
import type { Logger } from "../../src/core/log.ts";

export type E2eeState =
  /** DAVE encrypts every packet: the group's keys are held. */
  | {
      kind: "dave";
      version: number;
      /** The last transition executed: a new one is a new epoch (and privacy code). */
      transitionId: number | undefined;
      session: DAVESession;
    }
  /** The call runs without DAVE (protocol version 0): clear media is what the members expect. */
  | { kind: "transport-only" }
  /** DAVE is negotiated but its group is not ready: a packet sent now would leave in clear. */
  | { kind: "pending"; version: number }
  /** No ready voice connection: nothing can be sent. */
  | { kind: "offline" };

export function e2eeState(connection: VoiceConnection): E2eeState {
  const state = connection.state;
  if (state.status !== VoiceConnectionStatus.Ready) return { kind: "offline" };
  const net = state.networking.state;
  if (net.code !== NetworkingStatusCode.Ready) return { kind: "offline" };
  const dave = net.dave;
  if (!dave || dave.protocolVersion === 0) return { kind: "transport-only" };
  if (!dave.session?.ready) return { kind: "pending", version: dave.protocolVersion };
  return { kind: "dave", version: dave.protocolVersion, transitionId: dave.lastTransitionId, session: dave };
}

/** The voice privacy code members compare ("" without DAVE); read on demand, it is a native call. */
export function privacyCodeOf(state: E2eeState): string {
  return state.kind === "dave" ? (state.session.voicePrivacyCode ?? "") : "";
}

/** What may go out now: audio only when it leaves as the members expect it. */
export function maySpeak(state: E2eeState): boolean {
  return state.kind === "dave" || state.kind === "transport-only";
}

/** The same state for logs and comparisons ("dave v1", "pending v1", …). */
export function describeE2ee(state: E2eeState): string {
  switch (state.kind) {
    case "dave":
      return `DAVE v${state.version} on`;
    case "pending":
      return `DAVE v${state.version} handshake pending`;
    case "transport-only":
      return "transport-only (no DAVE)";
    case "offline":
      return "voice connection not ready";
  }
}

export interface E2eeWatchOptions {
  log: Logger;
  clock: Clock;
  /** How long the agent's voice may be held for a DAVE group that is not ready before giving up. */
  holdLimitMs: number;
  /** The group stayed unready past the limit (the conversation ends rather than speak in clear). */
  onHoldTooLong(line: string): void;
}

/**
 * Follows one connection's encryption as the agent speaks: says in the log when DAVE came on (and
 * its privacy code), when a rebuild of the group holds the voice, when the call goes transport-only;
 * and gives up when a hold lasts too long.
 */
export class E2eeWatch {
  readonly #connection: VoiceConnection;
  readonly #opts: E2eeWatchOptions;
  #last: E2eeState = { kind: "offline" };
  /** Wall-clock time DAVE last came on (ISO), for the log. */
  #daveSince: string | undefined;
  #pendingSince: number | undefined;
  #gaveUp = false;

  constructor(connection: VoiceConnection, opts: E2eeWatchOptions) {
    this.#connection = connection;
    this.#opts = opts;
  }

  get daveSince(): string | undefined {
    return this.#daveSince;
  }

  /** The state now; logs a change. Cheap enough for every 20 ms tick. */
  check(): E2eeState {
    const now = e2eeState(this.#connection);
    const last = this.#last;
    const same =
      now.kind === last.kind &&
      (now.kind !== "dave" ||
        (last.kind === "dave" && now.session === last.session && now.transitionId === last.transitionId));
    if (!same) this.#changed(last, now);
    if (now.kind === "pending" && this.#pendingSince !== undefined && !this.#gaveUp) {
      const held = this.#opts.clock.now() - this.#pendingSince;
      if (held > this.#opts.holdLimitMs) {
        this.#gaveUp = true;
        this.#opts.onHoldTooLong(
          `the DAVE group was not ready ${Math.round(held)} ms after it was needed (limit ${this.#opts.holdLimitMs} ms): ending the conversation rather than speak unencrypted`,
        );
      }
    }
    return now;
  }

  /** Resolves once audio may go out (DAVE keys held, or a transport-only call); rejects after `timeoutMs`. */
  whenSpeakable(timeoutMs: number): Promise<E2eeState> {
    const { clock } = this.#opts;
    const start = clock.now();
    return new Promise((resolve, reject) => {
      const poll = () => {
        const state = this.check();
        if (maySpeak(state)) resolve(state);
        else if (clock.now() - start >= timeoutMs)
          reject(new Error(`${describeE2ee(state)} after ${timeoutMs} ms`));
        else clock.setTimeout(poll, 20);
      };
      poll();
    });
  }

  #changed(from: E2eeState, to: E2eeState): void {
    this.#last = to;
    const log = this.#opts.log;
    this.#pendingSince = to.kind === "pending" ? this.#opts.clock.now() : undefined;
    if (to.kind === "dave") {
      const renewed = from.kind === "dave";
      if (!renewed) this.#daveSince = new Date().toISOString();
      log.info(
        { dave: true, version: to.version, privacyCode: privacyCodeOf(to), daveSince: this.#daveSince },
        renewed
          ? "DAVE group changed (new epoch): new privacy code"
          : "DAVE on: the agent's voice is end-to-end encrypted",
      );
    } else if (to.kind === "pending") {
      log.info(
        { dave: false, version: to.version, was: describeE2ee(from) },
        "DAVE group not ready: the agent's voice is held until it is",
      );
    } else if (to.kind === "transport-only") {
      this.#daveSince = undefined;
      log.info(
        { dave: false, was: describeE2ee(from) },
        "the call runs without DAVE (transport encryption only)",
      );
    } else if (from.kind !== "offline") {
      log.info({ was: describeE2ee(from) }, "voice connection not ready: the agent's voice is held");
    }
  }
}
