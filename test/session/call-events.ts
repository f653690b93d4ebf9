// A call's events as the session records them, for store and transcript tests.
import type { CallEvent } from "../../src/records/call-record.ts";

export function callEvents(
  callId: string,
  turns: number,
  opts: { at?: string; from?: string; transport?: string; words?: (i: number) => [string, string] } = {},
): CallEvent[] {
  const at = opts.at ?? "2025-01-01T00:00:00.000Z";
  const events: CallEvent[] = [
    { type: "call-start", at, callId, transport: opts.transport ?? "twilio", from: opts.from ?? "+15550001" },
  ];
  for (let i = 0; i < turns; i++) {
    const [asked, answered] = opts.words?.(i) ?? [`question ${i}`, `answer ${i}`];
    events.push({ type: "user", at, text: asked, source: "speech" });
    events.push({
      type: "assistant",
      at,
      generated: answered,
      heard: answered,
      interrupted: false,
      toolCalls: [],
      metrics: { voiceToVoiceMs: 600 + i },
    });
  }
  events.push({ type: "call-end", at, reason: "caller hung up", outcome: "caller_hangup", durationMs: 1234 });
  return events;
}
