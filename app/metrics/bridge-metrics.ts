// Prometheus metrics of the bridge: per-turn latency histograms (the figures callers feel)
// and call counters, served on /metrics; the console reads percentiles of the same histograms.
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { CallEventSink, TurnMetrics } from "../../src/records/call-record.ts";
import { CallLevelMetrics } from "./call-levels.ts";
import { registerDefaultMetrics } from "./default-metrics.ts";
import { ServiceMetrics } from "./service-metrics.ts";

const LATENCY_BUCKETS_MS = [25, 50, 100, 150, 200, 300, 400, 500, 750, 1000, 1500, 2000, 3000, 5000];

/** The turn's figures that are times (the rest are counts, with their own metrics). */
export type TurnTime = Exclude<
  keyof TurnMetrics,
  "chatRequests" | "hedgedRequests" | "fallbacks" | "ttsReopens"
>;

const TURN_FIGURES: Record<TurnTime, string> = {
  eouDelayMs: "end of caller speech to turn confirmed",
  asrMs: "speech recognition time",
  llmTtftMs: "chat time to first token",
  ttsFirstAudioMs: "first text sent to TTS to first audio",
  voiceToVoiceMs: "end of caller speech to first agent audio on the wire",
  bargeInMs: "caller speech over the agent to agent audio cleared",
  detectMs: "end of caller speech to their words sent for recognition",
  waitMs: "the bridge's own wait in voice-to-voice (beyond detection and the service's times)",
};

/** One latency figure's percentiles, ms, estimated from its histogram (null before any turn). */
export interface FigurePercentiles {
  /** What the figure measures. */
  label: string;
  count: number;
  p50: number | null;
  p90: number | null;
  p99: number | null;
}

/**
 * Per-turn latency since the bridge started, as /metrics exports it. A percentile is estimated
 * within its histogram bucket as Prometheus's histogram_quantile does; one in the top bucket is
 * reported as `topBucketMs` (it is at least that).
 */
export interface LatencySummary {
  figures: Record<TurnTime, FigurePercentiles>;
  topBucketMs: number;
}

export class BridgeMetrics {
  readonly registry = new Registry();
  /** Callers' and rooms' levels per ended call. */
  readonly levels = new CallLevelMetrics(this.registry);
  /** The service's failures, hedges, fallbacks and circuits (src/session/resilience). */
  readonly service = new ServiceMetrics(this.registry);
  readonly activeCalls: Gauge;
  readonly calls: Counter<"transport" | "outcome">;
  /** Call-start webhook answers that could not be used, by cause (the route's agent took the call). */
  readonly agentWebhookFailures: Counter<"cause">;
  /** Calls by the agent that took them. */
  readonly agentCalls: Counter<"agent">;
  /** Post-call analyses, by how they went. */
  readonly analyses: Counter<"status">;
  /** Calls the bridge placed, by carrier and how dialling went. */
  readonly outboundCalls: Counter<"via" | "dial_outcome">;
  /** Data shed by a bounded queue toward a service or thread that fell behind (see shed()). */
  readonly backlogDrops: Counter<"queue">;
  readonly backlogDroppedBytes: Counter<"queue">;
  readonly #turn: Record<TurnTime, Histogram>;
  /** Chat requests per answered turn (tool rounds and retries make more than one). */
  readonly #chatRequests: Histogram;
  /** Replies started before the caller's turn was confirmed, by whether they were used. */
  readonly speculativeTurns: Counter<"outcome">;
  /** Chat requests of those thrown away (the caller went on). */
  readonly speculativeChatsDropped: Counter;
  /** Warm transfers, by how they went: each call's warm-transfer events (see tap). */
  readonly warmTransfers: Counter<"outcome">;
  #stopDefaults: (() => void) | undefined;

  /** `callsUp`: whether the bridge has calls now (the loop-lag sampler fills in more often then). */
  constructor(opts: { defaultMetrics?: boolean; callsUp?: () => boolean } = {}) {
    if (opts.defaultMetrics ?? true)
      this.#stopDefaults = registerDefaultMetrics(this.registry, opts.callsUp ?? (() => false));
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
    this.agentWebhookFailures = new Counter({
      name: "voice_bridge_agent_webhook_failures_total",
      help: "call-start webhook answers not used (timeout, http_error, unreachable, bad_answer, unknown_agent, bad_overrides)",
      labelNames: ["cause"],
      registers: [this.registry],
    });
    this.agentCalls = new Counter({
      name: "voice_bridge_agent_calls_total",
      help: "calls started, by the agent that took them",
      labelNames: ["agent"],
      registers: [this.registry],
    });
    this.outboundCalls = new Counter({
      name: "voice_bridge_outbound_calls_total",
      help: "calls the bridge placed, by carrier (sip, twilio) and dial outcome (human, machine, busy, no-answer, failed, canceled)",
      labelNames: ["via", "dial_outcome"],
      registers: [this.registry],
    });
    this.analyses = new Counter({
      name: "voice_bridge_call_analyses_total",
      help: "post-call analyses, by status (done, failed)",
      labelNames: ["status"],
      registers: [this.registry],
    });
    this.backlogDrops = new Counter({
      name: "voice_bridge_backlog_drops_total",
      help: "times a bounded queue shed data instead of growing, by queue (asr_upload: oldest unsent audio of an E6 upload; tts_send: an E5 session given up; sip_worker_frames: caller frames, each counted, the RTP worker dropped while the bridge's loop was behind; vad_backlog: caller audio a call's VAD skipped, more than 2 s behind the model)",
      labelNames: ["queue"],
      registers: [this.registry],
    });
    this.backlogDroppedBytes = new Counter({
      name: "voice_bridge_backlog_dropped_bytes_total",
      help: "bytes shed by bounded queues, by queue (audio bytes for asr_upload, sip_worker_frames and vad_backlog)",
      labelNames: ["queue"],
      registers: [this.registry],
    });
    const turn = {} as Record<TurnTime, Histogram>;
    for (const [key, help] of Object.entries(TURN_FIGURES) as [TurnTime, string][]) {
      const name = `voice_bridge_turn_${key.replace(/Ms$/, "").replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}_ms`;
      turn[key] = new Histogram({
        name,
        help: `${help}, ms`,
        buckets: LATENCY_BUCKETS_MS,
        registers: [this.registry],
      });
    }
    this.#turn = turn;
    this.#chatRequests = new Histogram({
      name: "voice_bridge_turn_chat_requests",
      help: "chat requests an agent turn sent (one per tool round, plus retries)",
      buckets: [1, 2, 3, 4, 6],
      registers: [this.registry],
    });
    this.speculativeTurns = new Counter({
      name: "voice_bridge_speculative_turns_total",
      help: "replies started on the transcript before the end of the caller's turn was confirmed, by outcome (used: released at the confirmation; dropped: the caller went on)",
      labelNames: ["outcome"],
      registers: [this.registry],
    });
    this.speculativeChatsDropped = new Counter({
      name: "voice_bridge_speculative_chat_requests_dropped_total",
      help: "chat requests of speculative replies that were thrown away",
      registers: [this.registry],
    });
    this.warmTransfers = new Counter({
      name: "voice_bridge_warm_transfers_total",
      help: "warm transfers, by outcome (joined; or back to the agent: declined, no-decision, busy, no-answer, voicemail, failed, canceled)",
      labelNames: ["outcome"],
      registers: [this.registry],
    });
  }

  /** `sink`, the figures of each call's events taken on their way to the record (levels, warm transfers). */
  tap(sink: CallEventSink): CallEventSink {
    const levels = this.levels.tap(sink);
    return {
      append: (callId, event) => {
        if (event.type === "warm-transfer") this.warmTransfers.inc({ outcome: event.outcome });
        levels.append(callId, event);
      },
    };
  }

  /** The bridge closed: its loop-lag histogram is fed no more. */
  close(): void {
    this.#stopDefaults?.();
    this.#stopDefaults = undefined;
  }

  /** A bounded queue shed `bytes` (see src/api/backlog.ts and the SIP worker channel). */
  shed(queue: string, bytes: number): void {
    this.backlogDrops.inc({ queue });
    this.backlogDroppedBytes.inc({ queue }, bytes);
  }

  /** The embedded service's refused engine jobs (503 engine_busy), read at each scrape. */
  countRefusals(read: () => Readonly<Record<string, number>>): void {
    new Counter({
      name: "voice_bridge_local_service_refused_total",
      help: "jobs the embedded service's engines refused rather than queue (waited past their deadline, or the queue was full), by engine",
      labelNames: ["engine"],
      registers: [this.registry],
      collect() {
        // The service keeps the totals; the counter shows them as they are at the scrape.
        this.reset();
        for (const [engine, n] of Object.entries(read())) this.inc({ engine }, n);
      },
    });
  }

  observeTurn(m: TurnMetrics): void {
    for (const key of Object.keys(this.#turn) as TurnTime[]) {
      const v = m[key];
      if (typeof v === "number" && Number.isFinite(v)) this.#turn[key].observe(v);
    }
    if (m.chatRequests !== undefined) this.#chatRequests.observe(m.chatRequests);
  }

  observeSpeculation(s: { used: boolean; chatRequests: number }): void {
    this.speculativeTurns.inc({ outcome: s.used ? "used" : "dropped" });
    if (!s.used) this.speculativeChatsDropped.inc(s.chatRequests);
  }

  async latency(): Promise<LatencySummary> {
    const figures = {} as Record<TurnTime, FigurePercentiles>;
    for (const [key, histogram] of Object.entries(this.#turn) as [TurnTime, Histogram][]) {
      const { values } = await histogram.get();
      // Cumulative counts per upper bound, +Inf last.
      const buckets = values
        .filter((v) => v.metricName?.endsWith("_bucket"))
        .map((v) => ({
          le: v.labels.le === "+Inf" ? Number.POSITIVE_INFINITY : Number(v.labels.le),
          n: v.value,
        }));
      const count = buckets.at(-1)?.n ?? 0;
      const q = (p: number) => quantile(buckets, p);
      figures[key] = { label: TURN_FIGURES[key], count, p50: q(0.5), p90: q(0.9), p99: q(0.99) };
    }
    return { figures, topBucketMs: LATENCY_BUCKETS_MS.at(-1)! };
  }

  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}

/** The `p` quantile of cumulative buckets, interpolated linearly inside its bucket (histogram_quantile). */
function quantile(buckets: { le: number; n: number }[], p: number): number | null {
  const total = buckets.at(-1)?.n ?? 0;
  if (total === 0) return null;
  const rank = p * total;
  let lower = 0;
  let below = 0;
  for (const b of buckets) {
    if (b.n >= rank) {
      if (!Number.isFinite(b.le)) return lower;
      const inBucket = b.n - below;
      return Math.round(inBucket > 0 ? lower + ((b.le - lower) * (rank - below)) / inBucket : b.le);
    }
    lower = b.le;
    below = b.n;
  }
  return lower;
}
