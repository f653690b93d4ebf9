import { describe, expect, expectTypeOf, it } from "vitest";
import {
  IMAGE_DEFAULT_SIZE,
  IMAGE_SIZES,
  LIMITS,
  type ResponsesStreamEvent,
  TTS_AUDIO_DONE_TYPES,
  TTS_DEFAULT_SAMPLE_RATE,
  TTS_SAMPLE_RATES,
  type TtsServerEvent,
} from "../../src/api/types/index.ts";

describe("wire types", () => {
  it("defaults lie inside their lists and ranges", () => {
    expect(TTS_SAMPLE_RATES).toContain(TTS_DEFAULT_SAMPLE_RATE);
    expect(IMAGE_SIZES).toContain(IMAGE_DEFAULT_SIZE);
    for (const r of [LIMITS.steps, LIMITS.cfgScale, LIMITS.voicePageSize, LIMITS.speed, LIMITS.volume]) {
      expect(r.default).toBeGreaterThanOrEqual(r.min);
      expect(r.default).toBeLessThanOrEqual(r.max);
    }
  });

  it("discriminated unions narrow on type", () => {
    const ev = JSON.parse(
      '{"type":"tts.response.audio.delta","event_id":"e1","data":{"session_id":"s","status":"unfinished","audio":"AA==","duration":0.1}}',
    ) as TtsServerEvent;
    if (ev.type === "tts.response.audio.delta") expectTypeOf(ev.data.duration).toEqualTypeOf<number>();
    expect(TTS_AUDIO_DONE_TYPES).toEqual(["tts.response.audio.done", "response.audio.done"]);
    const r = { type: "response.output_text.delta", sequence_number: 3 } as ResponsesStreamEvent;
    if (r.type === "response.output_text.delta") expectTypeOf(r.delta).toEqualTypeOf<string>();
    expect(r.sequence_number).toBe(3);
  });
});
