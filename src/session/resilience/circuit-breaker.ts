// One service target's circuit: after `failures` failures within `windowMs` the target is skipped
// (open) for `openMs`, so calls go straight to a fallback instead of each paying for a request
// that is likely to fail; then one request is let through as a probe (half-open), and its success
// closes the circuit again, its failure opens it for another `openMs`.
import type { Clock } from "../../core/clock.ts";

export type CircuitState = "closed" | "half-open" | "open";

export interface CircuitSettings {
  /** Failures within the window that open the circuit. */
  failures: number;
  windowMs: number;
  /** How long an open circuit skips its target before a probe, ms. */
  openMs: number;
}

export const DEFAULT_CIRCUIT: CircuitSettings = { failures: 5, windowMs: 30_000, openMs: 20_000 };

export class CircuitBreaker {
  readonly #clock: Clock;
  readonly #settings: CircuitSettings;
  readonly #onChange: (state: CircuitState) => void;
  /** When the recent failures happened (pruned to the window). */
  #failures: number[] = [];
  #state: CircuitState = "closed";
  #openUntil = 0;
  /** A half-open circuit's probe is out: nothing else is let through until it is back. */
  #probeOut = false;
  /** A probe that never reports (its caller vanished) frees its slot after this. */
  #probeUntil = 0;

  constructor(clock: Clock, settings: CircuitSettings, onChange: (state: CircuitState) => void) {
    this.#clock = clock;
    this.#settings = settings;
    this.#onChange = onChange;
  }

  get state(): CircuitState {
    return this.#state;
  }

  /**
   * May a request go to the target now? Open: no until openMs have passed, then it turns
   * half-open and this request is the probe; half-open: only while no probe is out. Each request
   * let through must report succeeded(), failed() or abandoned().
   */
  allow(): boolean {
    const now = this.#clock.now();
    if (this.#state === "open") {
      if (now < this.#openUntil) return false;
      this.#set("half-open");
    }
    if (this.#state === "closed") return true;
    if (this.#probeOut && now < this.#probeUntil) return false;
    this.#probeOut = true;
    this.#probeUntil = now + this.#settings.openMs;
    return true;
  }

  succeeded(): void {
    this.#failures = [];
    this.#probeOut = false;
    if (this.#state !== "closed") this.#set("closed");
  }

  failed(): void {
    const now = this.#clock.now();
    this.#probeOut = false;
    if (this.#state === "half-open") {
      this.#open(now);
      return;
    }
    if (this.#state === "open") return;
    const since = now - this.#settings.windowMs;
    this.#failures = this.#failures.filter((t) => t > since);
    this.#failures.push(now);
    if (this.#failures.length >= this.#settings.failures) this.#open(now);
  }

  /** A request let through ended without telling (aborted: a hedge lost, the caller went on). */
  abandoned(): void {
    this.#probeOut = false;
  }

  #open(now: number): void {
    this.#failures = [];
    this.#openUntil = now + this.#settings.openMs;
    this.#set("open");
  }

  #set(state: CircuitState): void {
    if (this.#state === state) return;
    this.#state = state;
    this.#onChange(state);
  }
}
