// The event loop's lag on /metrics comes from the bridge's paced wake-ups, with a sampler that
// fills in every 50 ms only while calls are up and nothing paced reports, and once a second
// otherwise (an idle bridge is not woken 20 times a second to be measured).
import { describe, expect, it } from "vitest";
import { BridgeMetrics } from "../../app/metrics/bridge-metrics.ts";
import {
  openLoopLag,
  recordTimerLateness,
  SAMPLE_BUSY_MS,
  samplingPeriodMs,
} from "../../src/core/loop-lag.ts";
import { until } from "../helpers/until.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const block = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end) {}
};
const gauge = (body: string, name: string) =>
  Number(body.match(new RegExp(`^${name} ([0-9.eE+-]+)`, "m"))?.[1]) * 1000;

describe("event-loop lag", () => {
  it("keeps prom-client's default metrics and lag names; a paced wake-up's lateness shows until the next scrape", async () => {
    const m = new BridgeMetrics();
    recordTimerLateness(0.4);
    recordTimerLateness(37);
    let { body } = await m.render();
    for (const name of [
      "process_cpu_seconds_total",
      "nodejs_heap_size_used_bytes",
      "nodejs_eventloop_lag_seconds",
    ])
      expect(body).toContain(`${name} `);
    expect(gauge(body, "nodejs_eventloop_lag_max_seconds")).toBeCloseTo(37, 0);
    expect(gauge(body, "nodejs_eventloop_lag_min_seconds")).toBeLessThan(1);
    ({ body } = await m.render());
    // Reset at each scrape, as prom-client's monitor is.
    expect(gauge(body, "nodejs_eventloop_lag_max_seconds")).toBeLessThan(37);
    m.close();
  });

  it("samples the loop every 50 ms while calls are up and nothing paced runs, and catches a stall", async () => {
    let calls = 0;
    const m = new BridgeMetrics({ callsUp: () => calls > 0 });
    calls++;
    // The sampler turns to 50 ms at its next look (after a second at most, or two if paced
    // wake-ups were reported in the last one).
    await until(() => samplingPeriodMs() === SAMPLE_BUSY_MS, "the busy period", 3_000);
    await m.render();
    // The sampler's next wake-up (due within 50 ms) comes 100 ms late at least; seen at a scrape
    // once it has run (a scrape before that reads and resets the max without it).
    block(150);
    const lagMaxMs = async () => gauge((await m.render()).body, "nodejs_eventloop_lag_max_seconds");
    await expect.poll(lagMaxMs, { timeout: 2_000 }).toBeGreaterThan(90);
    // A paced wake-up reports: the sampler backs off to once a second at its next look.
    recordTimerLateness(1);
    await until(() => samplingPeriodMs() !== SAMPLE_BUSY_MS, "the sampler to back off", 3_000);
    calls--;
    m.close();
  });

  it("wakes an idle process about once a second to measure it, not every 50 ms", async () => {
    const lag = openLoopLag(() => false);
    // A rate: counted over a window of time, so a fixed one.
    await sleep(2600);
    // Samples of the sampler alone (no paced timer, no call): one a second.
    expect(lag.histogram.count).toBeGreaterThanOrEqual(1);
    expect(lag.histogram.count).toBeLessThanOrEqual(4);
    // Closed, it is fed no more.
    lag.close();
    const n = lag.histogram.count;
    recordTimerLateness(5);
    expect(lag.histogram.count).toBe(n);
  });
});
