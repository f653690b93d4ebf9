import { describe, expect, it } from "vitest";
import { BridgeMetrics } from "../src/metrics.ts";

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
});
