// Conditions tests wait on, checked again whenever a fake server's state changes.

export class Waiters {
  readonly #checks = new Set<() => void>();

  /** Anyone waiting (so a hot path can skip `changed()` when nobody is). */
  get pending(): boolean {
    return this.#checks.size > 0;
  }

  /** Resolves once `test()` holds. */
  waitFor(test: () => boolean): Promise<void> {
    if (test()) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (!test()) return;
        this.#checks.delete(check);
        resolve();
      };
      this.#checks.add(check);
    });
  }

  /** The state changed: every waiting condition is checked again. */
  changed(): void {
    for (const check of [...this.#checks]) check();
  }
}
