// prom-client's default process metrics (CPU, memory, handles, GC, …) with the event loop's lag
// measured by the bridge's own paced wake-ups (bridges/loop-lag.ts) instead of prom-client's
// monitor, whose timer wakes an idle process every period. The lag keeps prom-client's metric
// names and meaning (seconds, over the time since the last scrape), less the sampling period
// its monitor added to every figure.
import { createRequire } from "node:module";
import { collectDefaultMetrics, Gauge, type Registry } from "prom-client";
import { openLoopLag } from "../../src/core/loop-lag.ts";

const requireCjs = createRequire(import.meta.url);

type Collector = (registry: Registry, config: object) => void;

/**
 * Registers the defaults but prom-client's event-loop lag, then ours under the same names; returns
 * what stops feeding it (the bridge closing).
 */
export function registerDefaultMetrics(registry: Registry, callsUp: () => boolean): () => void {
  for (const name of collectDefaultMetrics.metricsList) {
    if (name === "eventLoopLag") continue;
    // Each default metric is its own module in prom-client (lib/defaultMetrics.js lists them);
    // a version that moved them fails here, at start, not silently.
    (requireCjs(`prom-client/lib/metrics/${name}`) as Collector)(registry, {});
  }
  const lag = openLoopLag(callsUp);
  const histogram = lag.histogram;
  const registers = [registry];
  const gauge = (suffix: string, help: string) =>
    new Gauge({ name: `nodejs_eventloop_lag_${suffix}seconds`, help, registers });
  new Gauge({
    name: "nodejs_eventloop_lag_seconds",
    help: "Lag of event loop in seconds.",
    registers,
    // One collect sets every lag figure (registered below, so a scrape reads them after it), as
    // prom-client's does; this one is how long a callback queued now waits for its turn.
    async collect() {
      const sec = (ns: number) => (Number.isFinite(ns) && histogram.count > 0 ? ns / 1e9 : 0);
      min.set(sec(histogram.min));
      max.set(sec(histogram.max));
      mean.set(sec(histogram.mean));
      stddev.set(sec(histogram.stddev));
      p50.set(sec(histogram.percentile(50)));
      p90.set(sec(histogram.percentile(90)));
      p99.set(sec(histogram.percentile(99)));
      histogram.reset();
      const start = performance.now();
      await new Promise((r) => setImmediate(r));
      this.set((performance.now() - start) / 1000);
    },
  });
  // Registered after the one whose collect sets them: a scrape reads them in this order.
  const min = gauge("min_", "The minimum recorded event loop delay.");
  const max = gauge("max_", "The maximum recorded event loop delay.");
  const mean = gauge("mean_", "The mean of the recorded event loop delays.");
  const stddev = gauge("stddev_", "The standard deviation of the recorded event loop delays.");
  const p50 = gauge("p50_", "The 50th percentile of the recorded event loop delays.");
  const p90 = gauge("p90_", "The 90th percentile of the recorded event loop delays.");
  const p99 = gauge("p99_", "The 99th percentile of the recorded event loop delays.");
  return () => lag.close();
}
