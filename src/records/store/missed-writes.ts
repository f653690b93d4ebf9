// The calls with an event the database refused: their stored record has a hole, so the write
// barrier (CallStore.written) answers false for them and memory keeps their events whole. Only
// refused writes add to it, and it is bounded, so a failing disk cannot make it grow without end.

const MAX_CALLS = 10_000;

export class MissedWrites {
  readonly #calls = new Set<string>();

  add(callIds: Iterable<string>): void {
    for (const callId of callIds) {
      this.#calls.delete(callId);
      this.#calls.add(callId);
    }
    while (this.#calls.size > MAX_CALLS) this.#calls.delete(this.#calls.values().next().value!);
  }

  /** Whether a call's events are all stored; a call found missing is told once (memory then keeps it). */
  take(callId: string): boolean {
    return this.#calls.delete(callId);
  }
}
