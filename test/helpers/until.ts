// Waiting on real processes and sockets: polls `get` until it gives a value (anything truthy), or
// fails saying what was awaited. Tests wait on events, never on fixed durations. `get` may be async
// (an HTTP request, a look at a container): each poll then waits for its answer. A poll that costs
// something (a process started) asks for a longer `everyMs`.
export async function until<T>(
  get: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 30_000,
  everyMs = 50,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await get();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
