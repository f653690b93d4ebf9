// `npm run bench -- chat`: the local service's chat completions streaming on loopback, scripted
// engine at zero pace, the service in its own worker thread so the load generator does not share
// its event loop. Prints one JSON line:
//   ttft_ms_p50 / ttft_ms_p90: request sent → first content delta received, one stream at a time
//   chunks_per_s: chunks received per second across 100 concurrent streams (each stream: a
//     request, all its chunks, the next request), over a fixed measuring window
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";

const KEY = "bench-key";
const STREAMS = 100;
const TTFT_SAMPLES = 300;
const WINDOW_MS = Number(process.env.BENCH_WINDOW_MS ?? 5000);

if (!isMainThread) {
  const { startLocalService } = await import("../src/service/index.ts");
  const svc = await startLocalService({
    dataDir: (workerData as { dir: string }).dir,
    apiKeys: [KEY],
    chat: { paceMs: 0 },
    maxConcurrentPerKey: 10_000,
  });
  parentPort!.postMessage(svc.url);
  parentPort!.on("message", async (m) => {
    if (m === "close") {
      await svc.close();
      parentPort!.postMessage("closed");
    }
  });
} else {
  await main();
}

interface StreamResult {
  ttftMs: number;
  chunks: number;
}

function stream(url: URL, agent: Agent, body: string): Promise<StreamResult> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let ttftMs = -1;
    let chunks = 0;
    let tail = "";
    const req = request(url, {
      method: "POST",
      agent,
      headers: {
        authorization: `Bearer ${KEY}`,
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
      },
    });
    req.on("response", (res) => {
      if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode}`));
      res.setEncoding("utf8");
      res.on("data", (text: string) => {
        const all = tail + text;
        const events = all.split("\n\n");
        tail = events.pop() ?? "";
        for (const ev of events) {
          if (!ev.startsWith("data: {")) continue;
          chunks++;
          if (ttftMs < 0 && ev.includes('"content":"') && !ev.includes('"content":""'))
            ttftMs = performance.now() - t0;
        }
      });
      res.on("end", () => resolve({ ttftMs, chunks }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "bench-chat-"));
  const worker = new Worker(new URL(import.meta.url), { workerData: { dir } });
  const base = await new Promise<string>((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  const url = new URL("/v1/chat/completions", base);
  const agent = new Agent({ keepAlive: true, maxSockets: STREAMS });
  // A caller turn the hotline answers with its longest line (the fallback, ~25 words).
  const body = JSON.stringify({
    model: "svc-3.5-flash",
    stream: true,
    messages: [
      { role: "system", content: "You are the Acme Bikes phone agent." },
      { role: "user", content: "I have a question about my bike's gears" },
    ],
  });

  for (let i = 0; i < 200; i++) await stream(url, agent, body);
  const ttft: number[] = [];
  for (let i = 0; i < TTFT_SAMPLES; i++) ttft.push((await stream(url, agent, body)).ttftMs);
  ttft.sort((a, b) => a - b);

  let chunks = 0;
  let requests = 0;
  const t0 = performance.now();
  const until = t0 + WINDOW_MS;
  await Promise.all(
    Array.from({ length: STREAMS }, async () => {
      while (performance.now() < until) {
        // Read the result first: `chunks += await …` would read chunks before the await and lose updates.
        const r = await stream(url, agent, body);
        chunks += r.chunks;
        requests++;
      }
    }),
  );
  const elapsedS = (performance.now() - t0) / 1000;

  agent.destroy();
  worker.postMessage("close");
  await new Promise((r) => worker.once("message", r));
  await worker.terminate();
  rmSync(dir, { recursive: true, force: true });
  const round = (v: number, d = 2) => Math.round(v * 10 ** d) / 10 ** d;
  console.log(
    JSON.stringify({
      bench: "chat",
      ttft_ms_p50: round(percentile(ttft, 50)),
      ttft_ms_p90: round(percentile(ttft, 90)),
      chunks_per_s: Math.round(chunks / elapsedS),
      streams: STREAMS,
      requests_per_s: Math.round(requests / elapsedS),
      chunks_per_stream: round(chunks / requests, 1),
      window_s: round(elapsedS, 1),
    }),
  );
}
