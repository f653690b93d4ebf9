// Counters of the AudioSocket server: what it accepted, and what it dropped and why.

export interface AudioSocketStats {
  /** Connections accepted since start. */
  connections: number;
  /** Connections open now. */
  active: number;
  /** Calls handed to the session. */
  calls: number;
  /** Connections that sent no UUID in time. */
  handshakeTimeouts: number;
  /** Connections with nothing from Asterisk for too long. */
  idleTimeouts: number;
  /** Connections closed for not speaking AudioSocket (first frame not a UUID, too many bad frames). */
  garbageClosed: number;
  /** Frames dropped: unknown kinds, lengths their kind never has, a second UUID, a non-digit DTMF. */
  badFrames: number;
  /** Connections that closed in the middle of a frame. */
  truncatedFrames: number;
  /** Audio frames dropped for arriving faster than real time. */
  floodDroppedFrames: number;
  /** Audio frames at another rate than the call's. */
  rateMismatchFrames: number;
  /** Error frames from Asterisk. */
  errorFrames: number;
  /** DTMF digits received. */
  dtmf: number;
}

export function newStats(): AudioSocketStats {
  return {
    connections: 0,
    active: 0,
    calls: 0,
    handshakeTimeouts: 0,
    idleTimeouts: 0,
    garbageClosed: 0,
    badFrames: 0,
    truncatedFrames: 0,
    floodDroppedFrames: 0,
    rateMismatchFrames: 0,
    errorFrames: 0,
    dtmf: 0,
  };
}
