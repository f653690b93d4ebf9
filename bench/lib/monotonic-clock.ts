// The kernel-stamping addons (rxStampMs in native/rtp/sender.c, native/bench/ws-stamps.c) give
// times in ms on CLOCK_MONOTONIC, the clock process.hrtime() reads, the same in every thread and
// process. performance.now() reads that clock too, from the thread's start: the two differ by a
// constant, measured here once per thread. (Not the wall clock less performance.timeOrigin: NTP
// moves the wall clock, and on CI that was 2.6 ms off by the time a test ran.)

/** Now, in ms on the monotonic clock: comparable with the addons' stamps and across threads. */
export function monotonicNowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** monotonic − performance.now(), from the closest-spaced of a few back-to-back readings. */
const offsetMs = (() => {
  let spread = Number.POSITIVE_INFINITY;
  let offset = 0;
  for (let i = 0; i < 16; i++) {
    const before = monotonicNowMs();
    const perf = performance.now();
    const after = monotonicNowMs();
    if (after - before < spread) {
      spread = after - before;
      offset = (before + after) / 2 - perf;
    }
  }
  return offset;
})();

/** The performance.now() time of a monotonic time (an addon's stamp, another thread's monotonicNowMs()). */
export function performanceMsOf(monotonicMs: number): number {
  return monotonicMs - offsetMs;
}
