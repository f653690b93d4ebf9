// What a telephony bridge offers for calls the bridge places: dial a number, hear how dialling
// goes, get the call's transport once answered. The app (src/outbound) records outcomes, runs
// answering-machine detection and starts the session; each bridge only dials.
import type { Logger } from "../core/log.ts";
import type { CallTransport } from "../session/transport.ts";

/** How dialling ended without an answer. */
export interface DialFailure {
  readonly outcome: "busy" | "no-answer" | "failed" | "canceled";
  /** The carrier's own words: a SIP status line, Twilio's CallStatus and SIP code. */
  readonly reason: string;
}

export interface DialRequest {
  /** Our call id (the record's); the SIP Call-ID, or the Twilio stream's parameter. */
  readonly callId: string;
  /** A number (`+` kept) or, for SIP, a full SIP URI. */
  readonly to: string;
  /** Caller id; the bridge's configured one when absent. */
  readonly from?: string;
  readonly ringTimeoutS: number;
  /** Answering-machine detection is wanted: a carrier that has its own may run it. */
  readonly machineDetection?: boolean;
  readonly log: Logger;
}

/** Who answered, as the carrier's own detection said (Twilio's AnsweredBy). */
export interface CarrierAmd {
  readonly result: "human" | "machine" | "unknown";
  readonly decidedAfterMs: number;
  /** Twilio's AnsweredBy as sent. */
  readonly detail: string;
}

export interface DialEvents {
  /** 180/183, Twilio's `ringing`. */
  ringing(detail: string): void;
  /**
   * The far end sends audio before it answers (SIP early media: ringback, a carrier's announcement,
   * a voicemail's greeting): where its 20 ms frames at `inputRate` go (a lent buffer), until the
   * answer or the failure. Never the session's: the agent is not on the call yet.
   */
  earlyMedia?(inputRate: number): ((frame: Int16Array) => void) | undefined;
  /** Answered: the call's transport, carrying audio from the answer on (not yet attached). */
  answered(transport: CallTransport): void;
  /** The carrier's answering-machine verdict, when it runs one (Twilio's asyncAmd). */
  carrierAmd?(amd: CarrierAmd): void;
  failed(failure: DialFailure): void;
}

/** A call being placed: it can be given up before the answer (CANCEL, Twilio's `canceled`). */
export interface PlacedCall {
  /** Before the answer: stops ringing, then `failed` comes with `canceled`. After it: nothing. */
  cancel(): void;
  /** The carrier runs answering-machine detection itself (its verdict comes as `carrierAmd`). */
  readonly carrierAmd?: boolean;
}

export type Dialer = (req: DialRequest, events: DialEvents) => PlacedCall;
