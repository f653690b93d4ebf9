// The aggregate latency table: percentiles of each per-turn figure over every call since the
// bridge started (GET /console/latency, from the same histograms /metrics exports).
import { h } from "./dom.js";
import { speedClass } from "./waterfall.js";

const NAMES = {
  eouDelayMs: "End of turn",
  asrMs: "Speech recognition",
  llmTtftMs: "LLM first token",
  ttsFirstAudioMs: "TTS first audio",
  voiceToVoiceMs: "Voice to voice",
  bargeInMs: "Barge-in reaction",
  detectMs: "Words sent to ASR",
  waitMs: "Bridge's own wait",
};

export async function refreshLatency() {
  const res = await fetch("/console/latency");
  if (!res.ok) return;
  const { figures, topBucketMs } = await res.json();
  const cell = (key, ms) => {
    if (ms === null) return h("td", { class: "none" }, "—");
    const text = ms >= topBucketMs ? `>${topBucketMs}` : String(ms);
    return h("td", { class: key === "voiceToVoiceMs" ? `speed ${speedClass(ms)}` : "" }, text);
  };
  const rows = Object.entries(NAMES).map(([key, name]) => {
    const f = figures[key];
    return h(
      "tr",
      { title: f.label },
      h("th", {}, name),
      h("td", { class: "n" }, String(f.count)),
      cell(key, f.p50),
      cell(key, f.p90),
      cell(key, f.p99),
    );
  });
  document.querySelector("#latency tbody").replaceChildren(...rows);
}
