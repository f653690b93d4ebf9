// The session's speech port on the real local service (E5 over a real WebSocket): a PCM
// transport gets samples at its own rate, an Opus transport gets the Opus packets of E5's
// opus_stream as they are — 20 ms each, decodable, the same speech — with no re-encoding.
import { describe, expect, it } from "vitest";
import { svcServices } from "../../app/bridge/svc-adapters.ts";
import { OpusCodec } from "../../codecs/opus.ts";
import { opusPacketSamples48k } from "../../codecs/opus-packet.ts";
import { isPcm } from "../../src/session/agent-audio.ts";
import type { TtsEvent } from "../../src/session/services.ts";
import type { AgentAudio, OutputFormat } from "../../src/session/transport.ts";
import { KEY, useService } from "../service/helpers/service.ts";
import { clientFor, rms } from "../service/speech/helpers.ts";

const t = useService();
const TEXT = "Our shop opens at nine in the morning.";

async function speak(format: OutputFormat): Promise<{ audio: AgentAudio[]; events: TtsEvent[] }> {
  const services = svcServices(clientFor(t.url, KEY), {
    chatModel: "svc-3.5-flash",
    ttsModel: "svc-tts-2",
    asrModel: "svcaudio-2.5-asr",
    voice: "en_female_aria",
    language: "en",
    hotwords: [],
  });
  const tts = await services.tts.open(format);
  tts.sendText(TEXT);
  tts.flush();
  const events: TtsEvent[] = [];
  for await (const ev of tts.events) {
    events.push(ev);
    if (ev.type === "sentence-end") break;
  }
  tts.close();
  return { audio: events.flatMap((e) => (e.type === "audio" ? [e.audio] : [])), events };
}

describe("the session's TTS in the transport's output format", () => {
  it("gives an Opus transport whole 20 ms packets of the same speech a PCM transport gets", async () => {
    const pcm = await speak({ kind: "pcm", rate: 48000 });
    const opus = await speak({ kind: "opus" });
    const samples = pcm.audio.filter(isPcm).reduce((n, a) => n + a.length, 0);
    const packets = opus.audio.flatMap((a) => (isPcm(a) ? [] : [...a.packets]));
    expect(opus.audio.every((a) => !isPcm(a))).toBe(true);
    expect(packets.length).toBeGreaterThan(50);
    // Every packet is one 20 ms Opus frame at 48 kHz, and the durations the events carry agree.
    expect(packets.every((p) => opusPacketSamples48k(p) === 960)).toBe(true);
    const eventMs = opus.events.reduce((ms, e) => ms + (e.type === "audio" ? e.durationMs : 0), 0);
    expect(eventMs).toBe(packets.length * 20);
    // The same speech: as long as the PCM (within the last, padded packet), and as loud once decoded.
    expect(Math.abs(packets.length * 960 - samples)).toBeLessThan(960 * 2);
    const codec = new OpusCodec(48000, 1);
    const decoded = new Int16Array(packets.length * 960);
    packets.forEach((p, i) => {
      decoded.set(codec.decode(p), i * 960);
    });
    const pcmAll = new Int16Array(samples);
    let at = 0;
    for (const a of pcm.audio.filter(isPcm)) {
      pcmAll.set(a, at);
      at += a.length;
    }
    expect(rms(decoded) / rms(pcmAll)).toBeGreaterThan(0.7);
    expect(rms(decoded) / rms(pcmAll)).toBeLessThan(1.3);
  });
});
