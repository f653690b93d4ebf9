// The transport port: what a call looks like to the session, whatever carries it
// (Twilio Media Streams, SIP/RTP, Discord). The session owns this interface so that it
// never imports a bridge; bridges implement it (bridges/transport.ts re-exports it).

export interface CallInfo {
  /** Unique per call (e.g. Twilio CallSid, SIP Call-ID). */
  readonly callId: string;
  readonly transport: "twilio" | "sip" | "discord" | "audiosocket" | "test";
  readonly from?: string;
  readonly to?: string;
  /** Provider-specific extras (Twilio customParameters, SIP headers...). */
  readonly params: Readonly<Record<string, string>>;
}

/** What the transport reports to the session. */
export interface TransportListener {
  /** One inbound frame: mono Int16 PCM, 20 ms at `inputRate`. A gap is simply absent frames. */
  audio(frame: Int16Array): void;
  /** A DTMF digit the caller pressed (0-9, *, #, A-D). */
  dtmf(digit: string): void;
  /** The playout position moved: cumulative ms of outbound audio the caller has heard. */
  played(playedMs: number): void;
  /** The call ended on the far side (hang-up, stream stop, socket loss). */
  ended(reason: string): void;
}

export interface CallTransport {
  readonly info: CallInfo;
  /** Sample rate of inbound frames. */
  readonly inputRate: number;
  /** Sample rate `play` expects (the session asks TTS for exactly this). */
  readonly outputRate: number;
  /** Starts delivering events; called once by the session. */
  attach(listener: TransportListener): void;
  /** Queues audio for the caller (mono Int16 at `outputRate`); the transport paces it out. */
  play(pcm: Int16Array): void;
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
}
