// Human-readable account of a simulated call: the bridge's transcript (GET /calls/{callSid})
// and what the simulator measured on the caller's side.

import { isObject } from "../../src/core/guards.ts";
import type { SimResult, SimTurn } from "./simulate.ts";

const secs = (ms: number) => (ms / 1000).toFixed(2);

function metricsLine(m: unknown): string {
  if (!isObject(m)) return "";
  const parts: string[] = [];
  for (const [k, v] of Object.entries(m)) {
    if (typeof v === "number") parts.push(`${k}=${Number.isInteger(v) ? v : v.toFixed(1)}`);
    else if (typeof v === "string" || typeof v === "boolean") parts.push(`${k}=${v}`);
  }
  return parts.join(" ");
}

/** The bridge's transcript, read leniently: turns with role/text/heard/interrupted/metrics. */
export function formatTranscript(transcript: unknown): string[] {
  const turns = isObject(transcript) && Array.isArray(transcript.turns) ? transcript.turns : null;
  if (!turns) return [`  (unrecognised shape) ${JSON.stringify(transcript).slice(0, 500)}`];
  if (turns.length === 0) return ["  (no turns)"];
  const lines: string[] = [];
  for (const t of turns) {
    if (!isObject(t)) continue;
    const role = t.role === "user" ? "caller" : t.role === "assistant" ? "agent" : String(t.role ?? "?");
    let line = `  ${`${role}:`.padEnd(8)}${typeof t.text === "string" ? t.text : JSON.stringify(t.text ?? "")}`;
    if (t.interrupted === true) {
      line += typeof t.heard === "string" ? `  [interrupted; heard: "${t.heard}"]` : "  [interrupted]";
    }
    lines.push(line);
    const metrics = metricsLine(t.metrics);
    if (metrics) lines.push(`          ${metrics}`);
  }
  return lines;
}

function turnLine(t: SimTurn): string {
  const what = t.source === "say" ? `say ${t.label ?? ""}`.trim() : `wav${t.label ? ` ${t.label}` : ""}`;
  const parts = [
    `  turn ${t.index + 1}`.padEnd(10),
    what.padEnd(22),
    `${secs(t.startMs)}–${secs(t.endMs)} s`.padEnd(16),
  ];
  if (t.bargeIn)
    parts.push(t.clearMs !== null ? `barge-in: clear after ${t.clearMs} ms;` : "barge-in: no clear;");
  parts.push(t.responseMs !== null ? `voice-to-voice ${t.responseMs} ms` : "no reply measured");
  return parts.join(" ");
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : Math.round((s[m - 1]! + s[m]!) / 2);
}

export function formatReport(r: SimResult): string {
  const lines: string[] = [];
  lines.push(`Call ${r.callSid} (stream ${r.streamSid})`);
  lines.push("");
  lines.push("Transcript (from the bridge):");
  if (r.transcript !== undefined) lines.push(...formatTranscript(r.transcript));
  else lines.push(`  unavailable: ${r.transcriptError ?? "not fetched"}`);
  lines.push("");
  lines.push("Measured by the simulator (caller side):");
  if (r.turns.length === 0) lines.push("  no caller speech");
  for (const t of r.turns) lines.push(turnLine(t));
  const v2v = r.turns.map((t) => t.responseMs).filter((x): x is number => x !== null);
  const clear = r.turns.map((t) => t.clearMs).filter((x): x is number => x !== null);
  if (v2v.length)
    lines.push(
      `  voice-to-voice: median ${median(v2v)} ms, max ${Math.max(...v2v)} ms over ${v2v.length} turn(s)`,
    );
  if (clear.length)
    lines.push(
      `  barge-in reaction: median ${median(clear)} ms, max ${Math.max(...clear)} ms over ${clear.length}`,
    );
  const cleared = r.marks.filter((m) => m.cleared).length;
  lines.push(
    `  ${secs(r.durationMs)} s, ended by ${r.endedBy}; media ${r.mediaSent} sent / ${r.mediaReceived} received; ` +
      `marks ${r.marks.length} echoed (${cleared} after clear); clears ${r.clears.length}`,
  );
  return lines.join("\n");
}
