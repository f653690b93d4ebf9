// Prometheus metrics of the bridge: per-turn latency histograms (the figures callers feel)
// and call counters, served on /metrics.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { TurnMetrics } from "./session/transcript.ts";

/** prom-client's event-loop lag sampling period, ms (its lag figures include one period). */
export const LOOP_LAG_SAMPLE_MS = 50;
const LATENCY_BUCKETS_MS = [25, 50, 100, 150, 200, 300, 400, 500, 750, 1000, 1500, 2000, 3000, 5000];

const TURN_FIGURES: Record<keyof TurnMetrics, string> = {
  eouDelayMs: "end of caller speech to turn confirmed",
  asrMs: "speech recognition time",
  llmTtftMs: "chat time to first token",
  ttsFirstAudioMs: "first text sent to TTS to first audio",
  voiceToVoiceMs: "end of caller speech to first agent audio on the wire",
  bargeInMs: "caller speech over the agent to agent audio cleared",
};

export class BridgeMetrics {
  readonly registry = new Registry();
  readonly activeCalls: Gauge;
  readonly calls: Counter<"transport" | "outcome">;
  readonly #turn: Record<keyof TurnMetrics, Histogram>;

  constructor(opts: { defaultMetrics?: boolean } = {}) {
    // The event-loop lag monitor wakes the loop once per sampling period: prom-client's default of
    // 10 ms is 100 wake-ups a second, which on this VM cost an idle bridge ~10 ms CPU per second
    // (the Discord bench's idle floor). Every 50 ms still gives the lag percentiles enough samples.
    if (opts.defaultMetrics ?? true)
      collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: LOOP_LAG_SAMPLE_MS });
    this.activeCalls = new Gauge({
      name: "voice_bridge_active_calls",
      help: "calls in progress",
      registers: [this.registry],
    });
    this.calls = new Counter({
      name: "voice_bridge_calls_total",
      help: "calls ended, by transport and how they ended",
      labelNames: ["transport", "outcome"],
      registers: [this.registry],
    });
    const turn = {} as Record<keyof TurnMetrics, Histogram>;
    for (const [key, help] of Object.entries(TURN_FIGURES) as [keyof TurnMetrics, string][]) {
      const name = `voice_bridge_turn_${key.replace(/Ms$/, "").replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}_ms`;
      turn[key] = new Histogram({
        name,
        help: `${help}, ms`,
        buckets: LATENCY_BUCKETS_MS,
        registers: [this.registry],
      });
    }
    this.#turn = turn;
  }

  observeTurn(m: TurnMetrics): void {
    for (const key of Object.keys(this.#turn) as (keyof TurnMetrics)[]) {
      const v = m[key];
      if (typeof v === "number" && Number.isFinite(v)) this.#turn[key].observe(v);
    }
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
