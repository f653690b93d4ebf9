// npm run bench -- codecs: CPU µs per second of audio on the call path's codec work.
import { mulawDecode, mulawEncode } from "../codecs/g711.ts";
import { NoiseSuppressor, noiseSuppressorAvailable } from "../codecs/noise-suppressor.ts";
import { OpusCodec } from "../codecs/opus.ts";
import { Framer } from "../codecs/pcm.ts";
import { Resampler } from "../codecs/resample.ts";
import { loadSileroModel, VoiceActivityDetector } from "../codecs/vad.ts";
import { cpuMicrosPerCall, cpuMicrosPerCallAsync, espeakSpeech, round } from "./lib/measure.ts";

const SECONDS = 10;
const speech8k = espeakSpeech(
  "Thanks for calling. Your order shipped on Monday and should arrive by Thursday. Is there anything else I can help you with today?",
  8000,
).subarray(0, 8000 * SECONDS);
const seconds = speech8k.length / 8000;

// Inbound (Twilio → session): 20 ms µ-law frames → PCM → 16 kHz → 20 ms frames.
const inboundFrames: Uint8Array[] = [];
for (let i = 0; i + 160 <= speech8k.length; i += 160)
  inboundFrames.push(mulawEncode(speech8k.subarray(i, i + 160)));
const inboundSeconds = (inboundFrames.length * 160) / 8000;
const decoded = new Int16Array(160);
const twilioInbound = cpuMicrosPerCall(() => {
  const up = new Resampler(8000, 16000);
  const framer = new Framer(320);
  for (const frame of inboundFrames) framer.push(up.push(mulawDecode(frame, decoded)));
});

// Outbound (TTS 24 kHz → Twilio): 24 kHz chunks (as TTS deltas arrive) → 8 kHz → 20 ms frames → µ-law.
const speech24k = espeakSpeech("Your order shipped on Monday and should arrive by Thursday.", 24000);
const chunks24k: Int16Array[] = [];
for (let i = 0; i < speech24k.length; i += 2400) chunks24k.push(speech24k.subarray(i, i + 2400));
const outboundSeconds = speech24k.length / 24000;
const encoded = new Uint8Array(160);
const twilioOutbound = cpuMicrosPerCall(() => {
  const down = new Resampler(24000, 8000);
  const framer = new Framer(160);
  for (const chunk of chunks24k) for (const f of framer.push(down.push(chunk))) mulawEncode(f, encoded);
});

// Discord inbound: 48 kHz stereo Opus packets → 16 kHz mono PCM (libopus decodes and downmixes).
const speech48k = espeakSpeech("Hello everyone, the meeting starts in five minutes.", 48000);
const stereo = new Int16Array(speech48k.length * 2);
for (let i = 0; i < speech48k.length; i++) stereo[2 * i] = stereo[2 * i + 1] = speech48k[i]!;
const encoder = new OpusCodec(48000, 2);
const packets: Uint8Array[] = [];
for (let i = 0; i + 1920 <= stereo.length; i += 1920)
  packets.push(encoder.encode(stereo.subarray(i, i + 1920)));
const opusSeconds = (packets.length * 960) / 48000;
const opusDecode = cpuMicrosPerCall(() => {
  const decoder = new OpusCodec(16000, 1);
  for (const p of packets) decoder.decode(p);
});

// VAD (Silero v5 behind the energy gate) in 20 ms frames at 16 kHz, as the session feeds it on every
// transport; and at 8 kHz for comparison (Silero's 8 kHz mode: tried for phone lines and not used,
// docs/dev/2026-11-28-vad-8khz-not-kept.md).
const model = await loadSileroModel();
const PHRASE =
  "Hello, I would like to know when my order will arrive, and whether I can still change the delivery address.";
/**
 * The phrase at `rate` in 20 ms frames, voiced ones only: continuous speech, the gaps between
 * espeak's words trimmed out.
 */
function voicedFrames(rate: 8000 | 16000): Int16Array[] {
  const pcm = espeakSpeech(PHRASE, rate);
  const n = rate / 50;
  const frames: Int16Array[] = [];
  for (let i = 0; i + n <= pcm.length; i += n) {
    const f = pcm.subarray(i, i + n);
    let e = 0;
    for (const v of f) e += v * v;
    if (Math.sqrt(e / f.length) > 500) frames.push(f);
  }
  return frames;
}
const voiced = voicedFrames(16000);
const voiced8k = voicedFrames(8000);
const quiet = new Int16Array(320 * 250); // 5 s of line noise well under the gate (about -70 dBFS)
let seed = 7;
for (let i = 0; i < quiet.length; i++) {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  quiet[i] = (seed % 21) - 10;
}
/** CPU µs per second of audio for the VAD over `frames` (20 ms each) at `sampleRate`. */
async function vadUsPerSecond(frames: Int16Array[], sampleRate: 8000 | 16000 = 16000): Promise<number> {
  const run = async () => {
    const vad = new VoiceActivityDetector(model, { sampleRate });
    for (const f of frames) await vad.push(f);
  };
  return (await cpuMicrosPerCallAsync(run)) / (frames.length / 50);
}
const quietFrames: Int16Array[] = [];
for (let i = 0; i < quiet.length; i += 320) quietFrames.push(quiet.subarray(i, i + 320));
const vadSpeech = await vadUsPerSecond(voiced);
const vadSpeech8k = await vadUsPerSecond(voiced8k, 8000);
const vadSilence = await vadUsPerSecond(quietFrames);

// Noise suppression (agent.noiseSuppression) on a phone caller's 8 kHz audio, 20 ms frames, as the
// session runs it; the budget is 1,000 µs per call-second.
function noiseSuppressionUsPerSecond(): number | undefined {
  if (!noiseSuppressorAvailable()) return undefined;
  const frames: Int16Array[] = [];
  for (let i = 0; i + 160 <= speech8k.length; i += 160) frames.push(speech8k.slice(i, i + 160));
  const us = cpuMicrosPerCall(() => {
    const ns = new NoiseSuppressor(8000);
    for (const f of frames) ns.process(f);
  });
  return us / (frames.length / 50);
}
const ns8k = noiseSuppressionUsPerSecond();

console.log(
  JSON.stringify({
    bench: "codecs",
    audio_seconds: round(seconds),
    twilio_inbound_us_per_s: round(twilioInbound / inboundSeconds),
    twilio_outbound_us_per_s: round(twilioOutbound / outboundSeconds),
    vad_speech_us_per_s: round(vadSpeech),
    vad_speech_8k_us_per_s: round(vadSpeech8k),
    vad_silence_us_per_s: round(vadSilence),
    opus_decode_us_per_s: round(opusDecode / opusSeconds),
    noise_suppression_8k_us_per_s: ns8k === undefined ? null : round(ns8k),
  }),
);
