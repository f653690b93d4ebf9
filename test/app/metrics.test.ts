import { describe, expect, it } from "vitest";
import { BridgeMetrics } from "../../app/metrics/bridge-metrics.ts";
import { UNHEARD } from "../../src/session/apology.ts";

describe("BridgeMetrics", () => {
  it("exports per-turn histograms and call counters in Prometheus text format", async () => {
    const m = new BridgeMetrics({ defaultMetrics: false });
    m.observeTurn({ voiceToVoiceMs: 420, eouDelayMs: 260, bargeInMs: 180 });
    m.observeTurn({ voiceToVoiceMs: 380 });
    m.activeCalls.inc();
    m.calls.inc({ transport: "twilio", outcome: "hangup" });
    const { body, contentType } = await m.render();
    expect(contentType).toMatch(/^text\/plain/);
    expect(body).toContain("voice_bridge_turn_voice_to_voice_ms_count 2");
    expect(body).toContain("voice_bridge_turn_voice_to_voice_ms_sum 800");
    expect(body).toContain('voice_bridge_turn_voice_to_voice_ms_bucket{le="400"} 1');
    expect(body).toContain("voice_bridge_turn_eou_delay_ms_count 1");
    expect(body).toContain("voice_bridge_turn_barge_in_ms_count 1");
    expect(body).toContain("voice_bridge_active_calls 1");
    expect(body).toContain('voice_bridge_calls_total{transport="twilio",outcome="hangup"} 1');
  });

  it("gives the console percentiles of the same histograms, interpolated within a bucket", async () => {
    const m = new BridgeMetrics({ defaultMetrics: false });
    // Ten turns: eight in the 300-400 ms bucket, one in 750-1000, one past the top bucket.
    for (let i = 0; i < 8; i++) m.observeTurn({ voiceToVoiceMs: 350 });
    m.observeTurn({ voiceToVoiceMs: 900 });
    m.observeTurn({ voiceToVoiceMs: 9000 });
    const { figures, topBucketMs } = await m.latency();
    const v2v = figures.voiceToVoiceMs;
    expect(v2v.count).toBe(10);
    // Rank 5 of the bucket's 8 (ranks 0-8 spread over 300-400 ms): 300 + 100 × 5/8.
    expect(v2v.p50).toBe(363);
    // Rank 9 is the 750-1000 bucket's only turn: its upper bound.
    expect(v2v.p90).toBe(1000);
    // Rank 9.9 falls past the top bucket: reported as the top bound, which the page shows as "> 5000".
    expect(v2v.p99).toBe(topBucketMs);
    expect(figures.asrMs).toMatchObject({ count: 0, p50: null, p90: null, p99: null });
    expect(v2v.label).toMatch(/first agent audio/);
  });

  it("counts what bounded queues shed, and the embedded service's refusals as they stand at each scrape", async () => {
    const m = new BridgeMetrics({ defaultMetrics: false });
    m.shed("asr_upload", 3000);
    m.shed("asr_upload", 1500);
    m.shed("tts_send", 2_000_000);
    const refused = { asr: 2, tts: 0 };
    m.countRefusals(() => refused);
    let { body } = await m.render();
    expect(body).toContain('voice_bridge_backlog_drops_total{queue="asr_upload"} 2');
    expect(body).toContain('voice_bridge_backlog_dropped_bytes_total{queue="asr_upload"} 4500');
    expect(body).toContain('voice_bridge_backlog_drops_total{queue="tts_send"} 1');
    expect(body).toContain('voice_bridge_local_service_refused_total{engine="asr"} 2');
    refused.asr = 5;
    refused.tts = 1;
    ({ body } = await m.render());
    expect(body).toContain('voice_bridge_local_service_refused_total{engine="asr"} 5');
    expect(body).toContain('voice_bridge_local_service_refused_total{engine="tts"} 1');
  });

  it("counts warm transfers by outcome from the call events it passes on to the record", async () => {
    const m = new BridgeMetrics({ defaultMetrics: false });
    const passed: string[] = [];
    const sink = m.tap({ append: (_id, e) => passed.push(e.type) });
    const at = new Date().toISOString();
    sink.append("c1", { type: "warm-transfer", at, target: "2001", outcome: "busy", why: "486" });
    const leg = { id: "xfer-1", who: "2001", answeredAt: at, joinedAt: at };
    sink.append("c1", { type: "warm-transfer", at, target: "2001", outcome: "joined", leg });
    sink.append("c1", {
      type: "call-end",
      at,
      reason: "BYE",
      outcome: "transferred",
      durationMs: 9000,
      levels: { callerDb: -30, roomHeldMs: 0, resentUtterances: 2 },
    });
    expect(passed).toEqual(["warm-transfer", "warm-transfer", "call-end"]);
    const { body } = await m.render();
    expect(body).toContain('voice_bridge_warm_transfers_total{outcome="busy"} 1');
    expect(body).toContain('voice_bridge_warm_transfers_total{outcome="joined"} 1');
    expect(body).toContain("voice_bridge_caller_speech_level_dbfs_count 1");
    expect(body).toContain("voice_bridge_utterances_resent_total 2");
  });

  it("counts the callers asked to say it again, and no other words the agent said", async () => {
    const m = new BridgeMetrics({ defaultMetrics: false });
    const sink = m.tap({ append: () => {} });
    const at = new Date().toISOString();
    const said = (generated: string, error?: string) =>
      sink.append("c1", {
        type: "assistant",
        at,
        generated,
        heard: generated,
        interrupted: false,
        toolCalls: [],
        metrics: {},
        ...(error ? { error } : {}),
      });
    said("Sorry, I didn't catch that. Could you say it again?", UNHEARD);
    said("We open at nine.");
    said("Sorry, I'm having trouble on my side.", "chat: 503");
    said("Sorry, I didn't catch that. Could you say it again?", UNHEARD);
    const { body } = await m.render();
    expect(body).toContain("voice_bridge_callers_asked_again_total 2");
  });
});
