// A turn's latency waterfall: where the time between the caller's last word and the agent's first
// sound went. Every stage is drawn on one time axis from the end of the caller's speech, so the
// stages that run side by side (the end-of-turn wait and recognition) overlap, and the longest
// stage is painted in warning colours with its name called out.
import { fmtMs, h } from "./dom.js";

/**
 * The stages of a turn from its metrics (TurnMetrics of the record: eouDelayMs, asrMs, llmTtftMs,
 * ttsFirstAudioMs, voiceToVoiceMs). The reply starts once the words are recognized: chat, then
 * speech, one after the other.
 */
function stagesOf(m) {
  const stages = [];
  if (m.eouDelayMs !== undefined)
    stages.push({
      name: "End of turn",
      hint: "silence waited to be sure the caller had finished",
      from: 0,
      ms: m.eouDelayMs,
    });
  if (m.asrMs !== undefined)
    stages.push({
      name: "Speech recognition",
      hint: "transcript of the caller's words",
      from: 0,
      ms: m.asrMs,
    });
  const chatFrom = m.asrMs ?? 0;
  if (m.llmTtftMs !== undefined)
    stages.push({ name: "LLM first token", hint: "the model's first word", from: chatFrom, ms: m.llmTtftMs });
  const ttsFrom = chatFrom + (m.llmTtftMs ?? 0);
  if (m.ttsFirstAudioMs !== undefined)
    stages.push({
      name: "TTS first audio",
      hint: "the voice's first sound",
      from: ttsFrom,
      ms: m.ttsFirstAudioMs,
    });
  return stages;
}

/** The waterfall of a turn's metrics, or null when the turn answered no caller words (a greeting). */
export function waterfall(m) {
  if (m.voiceToVoiceMs === undefined) return null;
  const stages = stagesOf(m);
  const total = m.voiceToVoiceMs;
  const span = Math.max(total, ...stages.map((s) => s.from + s.ms), 1);
  const slowest = stages.reduce((a, b) => (b.ms > (a?.ms ?? -1) ? b : a), undefined);
  const pct = (ms) => `${((100 * ms) / span).toFixed(2)}%`;
  const row = (s, cls) =>
    h(
      "div",
      { class: `wf-row ${cls}`, title: `${s.name}: ${s.hint}` },
      h("span", { class: "wf-name" }, s.name),
      h(
        "span",
        { class: "wf-track" },
        h("span", { class: "wf-bar", style: { left: pct(s.from), width: pct(Math.max(s.ms, span / 400)) } }),
      ),
      h(
        "span",
        { class: "wf-ms" },
        fmtMs(s.ms),
        cls.includes("slow") ? h("b", { class: "wf-flag" }, "slowest") : null,
      ),
    );
  return h(
    "div",
    { class: "waterfall", role: "img", "aria-label": `latency waterfall: ${fmtMs(total)} voice to voice` },
    ...stages.map((s) => row(s, s === slowest && stages.length > 1 ? "stage slow" : "stage")),
    row(
      {
        name: "Audio on the wire",
        hint: "end of the caller's speech to the agent's first audio sent to the call",
        from: 0,
        ms: total,
      },
      "total",
    ),
    h(
      "div",
      { class: "wf-axis" },
      h("span", {}, "0"),
      h("span", {}, "ms after the caller stopped speaking"),
      h("span", {}, fmtMs(span)),
    ),
  );
}

/** A colour class for a voice-to-voice figure: what a caller feels as quick, slow, or too slow. */
export function speedClass(ms) {
  if (ms === undefined) return "";
  return ms <= 800 ? "fast" : ms <= 1500 ? "ok" : "slow";
}
