// npm run bench -- speech --upstream: what the local service adds on top of its speech upstreams.
// The upstream is the tests' fake OpenAI audio server, in this process, answering at once (a fixed
// transcript; its tone code for speech), so what remains of each latency is the service's own work
// (plus the loopback hops): request → resampling/WAV/multipart → upstream → parsing → SSE or WS.
//   asr_upstream_overhead_ms_p50              E6 as the bridge sends it (2 s pcm 16 kHz streamed in
//                                             20 ms writes): end of the body → transcript.text.done,
//                                             less the upstream's own time (request in → answer out)
//   asr_upstream_whole_body_overhead_ms_p50   the same audio in one body: request → done, less upstream
//   tts_upstream_first_audio_overhead_ms_p50  E5 sentence + flush → first audio.delta (pcm 8 kHz),
//                                             less the upstream's own time to its first audio chunk
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pcm16Format } from "../../src/api/asr.ts";
import { SvcClient } from "../../src/api/client.ts";
import { startLocalService } from "../../src/service/index.ts";
import { warmSpeechEngines } from "../../src/service/speech/engines.ts";
import { startFakeSpeechUpstream } from "../../test/fake-speech-upstream/index.ts";
import { percentile, round } from "./measure.ts";
import { ttsTurn } from "./tts-turn.ts";

const KEY = "bench-key";
const SENTENCE = "Thank you for calling, how can I help you today?";
const TARGET_MS = 5;

export async function runUpstreamBench(): Promise<void> {
  const up = await startFakeSpeechUpstream();
  up.transcribe = () => "I would like to check the balance of my account please.";
  const dir = mkdtempSync(join(tmpdir(), "bench-speech-up-"));
  const svc = await startLocalService({
    dataDir: dir,
    apiKeys: [KEY],
    speech: { asr: { baseUrl: up.url }, tts: { baseUrl: up.url } },
  });
  const client = new SvcClient({ baseURL: svc.url, apiKey: KEY, maxRetries: 0 });
  await warmSpeechEngines(svc.ctx);
  const last = (path: string) => up.requests.filter((r) => r.path === path).at(-1)!;
  try {
    // E6: 2 s of audio (content does not matter to the fake), 16 kHz pcm as the bridge sends it.
    const pcm = new Int16Array(32000).map((_, i) => Math.round(3000 * Math.sin(i / 5)));
    const options = { hotwords: ["balance", "account"] };
    const asr: number[] = [];
    const asrTotal: number[] = [];
    const whole: number[] = [];
    for (let i = 0; i < 63; i++) {
      // As the bridge sends it: the audio streams while the caller speaks (20 ms writes), the
      // latency that counts runs from the end of the body (the caller stopped) to the transcript.
      const upload = client.asr.upload(pcm16Format(16000), options);
      for (let at = 0; at < pcm.length; at += 320) upload.write(pcm.subarray(at, at + 320));
      // The caller speaks for 2 s: the audio has reached the service before the body ends. 100 ms
      // stands for those 2 s (the loopback carries the 64 kB in well under that).
      await new Promise((r) => setTimeout(r, 100));
      const t0 = performance.now();
      await upload.end().finalResult();
      const total = performance.now() - t0;
      const r = last("/v1/audio/transcriptions");
      // One body sent whole: request → transcript.
      const t1 = performance.now();
      await client.asr.recognize(pcm, pcm16Format(16000), options);
      const wholeMs = performance.now() - t1;
      const w = last("/v1/audio/transcriptions");
      if (i < 3) continue; // warm-up
      asrTotal.push(total);
      asr.push(total - (r.answeredAt! - r.receivedAt));
      whole.push(wholeMs - (w.answeredAt! - w.receivedAt));
    }
    // E5: one session, one sentence + flush per turn, first audio delta.
    const s = await client.tts.connect({
      model: "svc-tts-2",
      voice_id: "en_female_aria",
      response_format: "pcm",
      sample_rate: 8000,
    });
    const it = s[Symbol.asyncIterator]();
    const tts: number[] = [];
    const ttsTotal: number[] = [];
    for (let i = 0; i < 63; i++) {
      const first = await ttsTurn(s, it, SENTENCE);
      const q = last("/v1/audio/speech");
      if (i < 3) continue;
      ttsTotal.push(first);
      tts.push(first - (q.firstChunkAt! - q.receivedAt));
    }
    s.close();
    console.log(
      JSON.stringify({
        bench: "speech",
        mode: "upstream",
        asr_upstream_overhead_ms_p50: round(percentile(asr, 50), 2),
        asr_upstream_overhead_ms_p90: round(percentile(asr, 90), 2),
        asr_upstream_total_ms_p50: round(percentile(asrTotal, 50), 2),
        asr_upstream_whole_body_overhead_ms_p50: round(percentile(whole, 50), 2),
        tts_upstream_first_audio_overhead_ms_p50: round(percentile(tts, 50), 2),
        tts_upstream_first_audio_overhead_ms_p90: round(percentile(tts, 90), 2),
        tts_upstream_first_audio_total_ms_p50: round(percentile(ttsTotal, 50), 2),
        targets: {
          asr_upstream_overhead_ms_p50: TARGET_MS,
          tts_upstream_first_audio_overhead_ms_p50: TARGET_MS,
        },
      }),
    );
  } finally {
    await svc.close();
    await up.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
