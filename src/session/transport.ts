// The transport port: what a call looks like to the session, whatever carries it
// (Twilio Media Streams, SIP/RTP, Discord, AudioSocket, a browser's microphone). The session owns this interface so
// that it never imports a bridge; bridges implement it (bridges/transport.ts re-exports it).

import type { Logger } from "../core/log.ts";

export interface CallInfo {
  /** Unique per call (e.g. Twilio CallSid, SIP Call-ID, a Discord voice channel's conversation). */
  readonly callId: string;
  readonly transport: "twilio" | "sip" | "discord" | "audiosocket" | "browser" | "test";
  readonly from?: string;
  readonly to?: string;
  /** Provider-specific extras (Twilio customParameters, SIP X- headers...). */
  readonly params: Readonly<Record<string, string>>;
}

/** Whether a call not yet answered may be (the agent is chosen while it rings). */
export type Admission = { accept: true } | { accept: false; reason: string };

/**
 * Asked by a transport that can keep a call ringing before it answers (SIP before the 200, Twilio
 * before the TwiML): a refusal is sent as the protocol's own (603 Decline, <Reject>).
 */
export type AdmitCall = (info: CallInfo) => Promise<Admission>;

/**
 * The agent audio a transport takes. `pcm`: mono Int16 at `rate` (the session asks TTS for
 * exactly that rate). `opus`: Opus packets of 20 ms at 48 kHz, played as they are — asked of
 * TTS as an Ogg Opus stream and demuxed in-process, never decoded and re-encoded.
 */
export type OutputFormat = { readonly kind: "pcm"; readonly rate: number } | { readonly kind: "opus" };

/** Whole Opus packets, 20 ms each at 48 kHz. */
export interface OpusPackets {
  readonly packets: readonly Uint8Array[];
}

/** A piece of the agent's voice in the transport's output format: PCM samples, or Opus packets. */
export type AgentAudio = Int16Array | OpusPackets;

/** Duration of one Opus packet the session hands out, ms. */
export const OPUS_PACKET_MS = 20;

/** Who spoke, on a transport that carries several people (a Discord voice channel). */
export interface Speaker {
  /** Stable for the conversation (a Discord user id). */
  readonly id: string;
  /** How the others call them (a display name): it labels their turns in the history. */
  readonly name: string;
}

/** What the transport reports to the session. */
export interface TransportListener {
  /**
   * One inbound frame: mono Int16 PCM, 20 ms at `inputRate`. A gap is simply absent frames. On a
   * transport that carries several people, `speaker` says whose frame it is: each speaker is
   * listened to on their own.
   */
  audio(frame: Int16Array, speaker?: Speaker): void;
  /** A speaker left the conversation (their half-said words are dropped). */
  speakerLeft?(speakerId: string): void;
  /** A DTMF digit the caller pressed (0-9, *, #, A-D). */
  dtmf(digit: string): void;
  /** The playout position moved: cumulative ms of outbound audio the caller has heard. */
  played(playedMs: number): void;
  /** The call ended on the far side (hang-up, stream stop, socket loss). */
  ended(reason: string): void;
}

/**
 * How a carrier's own join of a warm transfer's two calls went (PersonLeg.join). `joined`: both
 * calls are joined beyond the bridge, and their media here ends (each transport reports `ended`).
 * `unchanged`: nothing was moved, the bridge relays the two. `person-lost`: the person's call was
 * moved but the caller's could not be; the person's call is ended, the caller is still here.
 */
export type NativeJoin =
  | { readonly kind: "joined" }
  | { readonly kind: "unchanged" | "person-lost"; readonly why: string };

/** A second call a warm transfer placed, answered by a person (session/warm-transfer.ts). */
export interface PersonLeg {
  /** Not yet attached: the warm transfer attaches it. */
  readonly transport: CallTransport;
  /** Who answered, for the record: the number or URI reached. */
  readonly who: string;
  /**
   * Joins the caller and the person on the carrier itself (a Twilio conference), taking the bridge
   * out of the media path; absent where the carrier cannot, and the bridge relays the two.
   */
  join?(): Promise<NativeJoin>;
}

/**
 * Places a warm transfer's call to the person, as the bridge places outbound calls (the agent's
 * caller id, answering-machine detection): resolves once a person answered; rejects with
 * PersonNotReached (warm-transfer.ts) when nobody, or a machine, did.
 */
export type DialPerson = (
  target: string,
  opts: { ringTimeoutS: number; signal: AbortSignal; log: Logger },
) => Promise<PersonLeg>;

/**
 * How the agent's keypad digits (the send_dtmf tool) reach the far end. `tones`: as DTMF tones in
 * the outbound audio, made by the session at the output rate (Twilio and AudioSocket carry no
 * digits out of band). `signal`: sent by the transport itself (SIP: RFC 4733 events, or INFO),
 * `send` resolving once the digit of `toneMs` is on its way, rejecting when it cannot be.
 */
export type DtmfOut =
  | { readonly kind: "tones" }
  | { readonly kind: "signal"; send(digit: string, toneMs: number): Promise<void> };

export interface CallTransport {
  readonly info: CallInfo;
  /** Sample rate of inbound frames. */
  readonly inputRate: number;
  /** The agent audio `play` takes. */
  readonly output: OutputFormat;
  /** Starts delivering events; called once by the session. */
  attach(listener: TransportListener): void;
  /**
   * Queues agent audio for the caller, in the transport's `output` format (Int16Array for
   * `pcm`, OpusPackets for `opus`); the transport paces it out.
   */
  play(audio: AgentAudio): void;
  /** Drops all audio not yet heard, at once (barge-in); afterwards queuedMs() equals playedMs(). */
  clear(): void;
  /**
   * Position of the end of the outbound queue on the call's audio timeline, ms: everything
   * passed to `play` since the call began, minus what `clear` dropped unheard. So
   * `queuedMs() - playedMs()` is what is still to be heard, and the next `play` starts there.
   */
  queuedMs(): number;
  /** Cumulative ms of outbound audio the caller has actually heard (never more than queuedMs). */
  playedMs(): number;
  hangUp(reason: string): Promise<void>;
  /** Transfers the call to a phone number or SIP URI. Rejects with a reason when it cannot. */
  transfer(target: string): Promise<void>;
  /** How the agent's keypad digits go out; absent when the transport carries none (Discord, a browser). */
  readonly dtmfOut?: DtmfOut;
}
