// npm run bench -- speech: latency of the local service's speech endpoints through the project's
// client, over loopback, service in this process (as the bridge embeds it). One JSON line:
//   tts_ws_first_audio_ms_p50  tts.text.delta (one sentence) + tts.text.flush → first audio.delta, pcm 8 kHz
//   tts_http_ms_p50            E4, one sentence, mp3, request → whole file
//   asr_2s_ms_p50              E6, a 2 s utterance (pcm 16 kHz) → transcript.text.done (also with hotwords)
//   tts_ws_sessions_concurrent sessions held at once with every first audio under 200 ms, while each
//                              session speaks a sentence every 1.5–3 s (a busy call)
// With --upstream: the service's own latency on top of speech upstreams (bench/lib/speech-upstream.ts).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SvcClient } from "../src/api/client.ts";
import type { TtsSession } from "../src/api/tts-session.ts";
import { startLocalService } from "../src/service/index.ts";
import { warmSpeechEngines } from "../src/service/speech/engines.ts";
import { espeakSpeech, percentile, round } from "./lib/measure.ts";
import { ttsTurn } from "./lib/tts-turn.ts";

if (process.argv.includes("--upstream")) {
  const { runUpstreamBench } = await import("./lib/speech-upstream.ts");
  await runUpstreamBench();
  process.exit(0);
}

const KEY = "bench-key";
const dir = mkdtempSync(join(tmpdir(), "bench-speech-"));
const svc = await startLocalService({ dataDir: dir, apiKeys: [KEY] });
const client = new SvcClient({ baseURL: svc.url, apiKey: KEY, maxRetries: 0 });
await warmSpeechEngines(svc.ctx);
const SENTENCE = "Thank you for calling, how can I help you today?";
const FIRST_AUDIO_LIMIT_MS = 200;

async function openSession(): Promise<TtsSession> {
  return client.tts.connect({
    model: "svc-tts-2",
    voice_id: "en_female_aria",
    response_format: "pcm",
    sample_rate: 8000,
  });
}

/** Sends one sentence + flush; resolves with ms to the first audio delta once the sentence ended. */
const turn = (s: TtsSession, it: AsyncIterator<unknown>) => ttsTurn(s, it, SENTENCE);

async function firstAudio(): Promise<number> {
  const s = await openSession();
  const it = s[Symbol.asyncIterator]();
  for (let i = 0; i < 5; i++) await turn(s, it); // warm-up
  const times: number[] = [];
  for (let i = 0; i < 60; i++) times.push(await turn(s, it));
  s.close();
  return percentile(times, 50);
}

async function ttsHttp(): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 33; i++) {
    const t0 = performance.now();
    await client.speech.create({
      model: "svc-tts-2",
      voice: "en_female_aria",
      input: SENTENCE,
      response_format: "mp3",
    });
    if (i >= 3) times.push(performance.now() - t0);
  }
  return percentile(times, 50);
}

async function asr2s(hotwords?: string[]): Promise<number> {
  const pcm = espeakSpeech("I would like to check the balance of my account please", 16000).subarray(
    0,
    32000,
  );
  const times: number[] = [];
  for (let i = 0; i < 23; i++) {
    const t0 = performance.now();
    await client.asr.recognize(pcm, { type: "pcm", rate: 16000, bits: 16, channel: 1 }, { hotwords });
    if (i >= 3) times.push(performance.now() - t0);
  }
  return percentile(times, 50);
}

/** N sessions at once, each speaking 3 sentences 1.5–3 s apart; the worst first-audio time. */
async function worstFirstAudio(n: number): Promise<number> {
  const sessions: TtsSession[] = [];
  for (let i = 0; i < n; i += 25)
    sessions.push(...(await Promise.all(Array.from({ length: Math.min(25, n - i) }, openSession))));
  const results = await Promise.all(
    sessions.map(async (s) => {
      const it = s[Symbol.asyncIterator]();
      const times: number[] = [];
      for (let k = 0; k < 3; k++) {
        await new Promise((r) => setTimeout(r, 1500 + Math.random() * 1500));
        times.push(await turn(s, it));
      }
      s.close();
      return Math.max(...times);
    }),
  );
  return Math.max(...results);
}

async function concurrent(): Promise<{ sessions: number; worstMs: number }> {
  let best = { sessions: 0, worstMs: 0 };
  for (const n of [25, 50, 100, 150, 200, 300, 400, 600, 800]) {
    // A level counts when one of two runs holds every first audio under the limit: the machine is
    // shared, and one stall from another process should not decide the figure.
    let worst = await worstFirstAudio(n);
    if (worst >= FIRST_AUDIO_LIMIT_MS) worst = await worstFirstAudio(n);
    if (worst >= FIRST_AUDIO_LIMIT_MS) break;
    best = { sessions: n, worstMs: worst };
  }
  return best;
}

try {
  const tts_ws_first_audio_ms_p50 = round(await firstAudio(), 2);
  const tts_http_ms_p50 = round(await ttsHttp(), 1);
  const asr_2s_ms_p50 = round(await asr2s(), 1);
  const asr_2s_hotwords_ms_p50 = round(await asr2s(["account balance", "agent", "billing", "refund"]), 1);
  const conc = await concurrent();
  console.log(
    JSON.stringify({
      bench: "speech",
      tts_ws_first_audio_ms_p50,
      tts_http_ms_p50,
      asr_2s_ms_p50,
      asr_2s_hotwords_ms_p50,
      tts_ws_sessions_concurrent: conc.sessions,
      tts_ws_concurrent_worst_first_audio_ms: round(conc.worstMs, 1),
      targets: { tts_ws_first_audio_ms: 40, asr_2s_ms: 300, tts_ws_sessions_concurrent: 100 },
    }),
  );
} finally {
  await svc.close();
  rmSync(dir, { recursive: true, force: true });
}
