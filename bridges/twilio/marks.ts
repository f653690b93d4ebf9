// What the caller has heard, from Twilio's mark echoes. A mark sent after some audio comes
// back once Twilio has played that audio, so the audio covered by echoed marks is heard
// audio. After a `clear`, Twilio echoes every mark still pending at once although their
// audio was dropped: marks outstanding when a clear is sent are written off and their
// echoes ignored. Heard audio is thus counted to within one mark's span, never over.

export type MarkEcho =
  | { kind: "played"; ms: number; lagMs: number; lateMs: number }
  | { kind: "cleared" }
  | { kind: "unknown" };

interface Pending {
  ms: number;
  sentAt: number;
  expectedAt: number;
}

export interface MarkStats {
  sent: number;
  played: number;
  /** Echoes of marks written off by a clear. */
  cleared: number;
  unknown: number;
  /** Mean and max time from sending a mark to its echo. */
  meanLagMs: number;
  maxLagMs: number;
  /** Max time an echo came after the moment the pacer expected its audio to finish playing. */
  maxLateMs: number;
}

export class MarkLedger {
  readonly #prefix: string;
  #next = 1;
  #pending = new Map<string, Pending>();
  #writtenOff = new Set<string>();
  #playedMs = 0;
  #sent = 0;
  #played = 0;
  #cleared = 0;
  #unknown = 0;
  #lagSum = 0;
  #lagMax = 0;
  #lateMax = Number.NEGATIVE_INFINITY;

  constructor(prefix = "vb") {
    this.#prefix = prefix;
  }

  /**
   * Records a mark covering `ms` of audio sent since the previous mark, and names it.
   * `expectedAt` is when that audio should finish playing on the far side (clock ms).
   */
  add(ms: number, now: number, expectedAt = now): string {
    const name = `${this.#prefix}${this.#next++}`;
    this.#pending.set(name, { ms, sentAt: now, expectedAt });
    this.#sent++;
    return name;
  }

  /** A clear is being sent: every pending mark is written off. Returns how many. */
  clear(): number {
    const n = this.#pending.size;
    for (const name of this.#pending.keys()) this.#writtenOff.add(name);
    this.#pending.clear();
    return n;
  }

  echo(name: string, now: number): MarkEcho {
    const p = this.#pending.get(name);
    if (p) {
      this.#pending.delete(name);
      this.#playedMs += p.ms;
      this.#played++;
      const lagMs = now - p.sentAt;
      const lateMs = now - p.expectedAt;
      this.#lagSum += lagMs;
      if (lagMs > this.#lagMax) this.#lagMax = lagMs;
      if (lateMs > this.#lateMax) this.#lateMax = lateMs;
      return { kind: "played", ms: p.ms, lagMs, lateMs };
    }
    if (this.#writtenOff.delete(name)) {
      this.#cleared++;
      return { kind: "cleared" };
    }
    this.#unknown++;
    return { kind: "unknown" };
  }

  /** Cumulative ms of audio covered by marks echoed before any clear wrote them off. */
  get playedMs(): number {
    return this.#playedMs;
  }

  get pendingCount(): number {
    return this.#pending.size;
  }

  get stats(): MarkStats {
    return {
      sent: this.#sent,
      played: this.#played,
      cleared: this.#cleared,
      unknown: this.#unknown,
      meanLagMs: this.#played ? Math.round(this.#lagSum / this.#played) : 0,
      maxLagMs: Math.round(this.#lagMax),
      maxLateMs: this.#played ? Math.round(this.#lateMax) : 0,
    };
  }
}
