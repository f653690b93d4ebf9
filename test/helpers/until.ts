// Waiting on real processes and sockets: polls `get` until it gives a value, or fails saying what
// was awaited. Tests wait on events, never on fixed durations.
export async function until<T>(
  get: () => T | undefined | false,
  what: string,
  timeoutMs = 30_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = get();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
