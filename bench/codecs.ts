// npm run bench -- codecs: CPU µs per second of audio on the call path's codec work.
import { mulawDecode, mulawEncode } from "../codecs/g711.ts";
import { OpusCodec } from "../codecs/opus.ts";
import { Framer } from "../codecs/pcm.ts";
import { Resampler } from "../codecs/resample.ts";
import { cpuMicrosPerCall, espeakSpeech, round } from "./lib/measure.ts";

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

console.log(
  JSON.stringify({
    bench: "codecs",
    audio_seconds: round(seconds),
    twilio_inbound_us_per_s: round(twilioInbound / inboundSeconds),
    twilio_outbound_us_per_s: round(twilioOutbound / outboundSeconds),
    opus_decode_us_per_s: round(opusDecode / opusSeconds),
  }),
);
