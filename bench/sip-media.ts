// `npm run bench -- sip-media [--calls N] [--seconds S]`: the SIP media path alone (no SIP
// signalling, no session): N RtpCallTransports (PCMU) on real UDP sockets in this process on the
// system clock, each fed 20 ms RTP by a caller in a worker thread and playing an espeak reply
// (about 3 s) every 6 s, silence between. Prints one JSON line:
//   main_thread_cpu_pct     CPU of the transports' thread over the window (100 = one core)
//   cpu_us_per_call_s       the same per call and per second of call
//   rtp_lateness_ms         p50/p99/max, over every RTP packet the callers received after 2 s:
//                           arrival minus the packet's timestamp, against the stream's best
//                           packet (0 = on its real-time schedule; see bench/lib/rtp-lateness.ts)
//   frames_per_call         20 ms frames delivered to the session per call (expected: S × 50)
//   underruns (and those inside the window), concealed, lost, dropped: summed over the calls
import { Worker } from "node:worker_threads";
import type { RtpCallTransport } from "../bridges/sip/rtp/call-transport.ts";
import { createRtpCallTransportFactory } from "../bridges/sip/rtp/call-transport.ts";
import { UdpRtpPortPool } from "../bridges/sip/rtp/port-pool.ts";
import { mulawEncode } from "../codecs/g711.ts";
import { systemClock } from "../src/core/clock.ts";
import { silentLogger } from "../src/core/log.ts";
import { numberArg } from "./lib/args.ts";
import { espeakSpeech, percentile, round } from "./lib/measure.ts";
import type { CallerReport, CallersData } from "./lib/sip-media-callers.ts";

const arg = numberArg;

const N = Math.round(arg("calls", 100));
const S = arg("seconds", 20);
const WARMUP_MS = 2000;
if (S < 5) throw new Error("--seconds: at least 5");

const caller = espeakSpeech("What are your opening hours? I would like to book a table for two.", 8000);
const timeline = new Int16Array(Math.ceil(S + 1) * 8000);
for (let at = 0; at + caller.length < timeline.length; at += 8000 * 5) timeline.set(caller, at);
const reply = espeakSpeech("We are open from nine in the morning until ten at night, every day.", 8000);

const data: CallersData = { calls: N, timeline: mulawEncode(timeline), seconds: S, warmupMs: WARMUP_MS };
const worker = new Worker(new URL("./lib/sip-media-callers.ts", import.meta.url), { workerData: data });
const callerPorts = await new Promise<number[]>((resolve, reject) => {
  worker.once("message", (m: { ports: number[] }) => resolve(m.ports));
  worker.once("error", reject);
});

// Ports below the ephemeral range: RTP_PORTS if given, else 20000-29999.
const pool = new UdpRtpPortPool({ host: "127.0.0.1", ports: process.env.RTP_PORTS ?? "20000-29999" });
const factory = createRtpCallTransportFactory();
const frames = new Array<number>(N).fill(0);
const transports: RtpCallTransport[] = [];
for (let i = 0; i < N; i++) {
  const endpoint = await pool.open();
  const t = factory({
    info: { callId: `bench-${i}`, transport: "sip", params: {} },
    endpoint,
    media: {
      codec: { name: "pcmu", payloadType: 0, clockRate: 8000 },
      telephoneEventPt: 101,
      remote: { address: "127.0.0.1", port: callerPorts[i]! },
      direction: "sendrecv",
    },
    control: { hangUp: async () => {}, transfer: async () => {} },
    clock: systemClock,
    log: silentLogger,
    mediaTimeoutMs: 60_000,
  }) as RtpCallTransport;
  t.attach({ audio: () => frames[i]!++, dtmf: () => {}, played: () => {}, ended: () => {} });
  transports.push(t);
}

const reports = new Promise<CallerReport[]>((resolve, reject) => {
  worker.once("message", (m: { reports: CallerReport[] }) => resolve(m.reports));
  worker.once("error", reject);
});
worker.postMessage({ targets: transports.map((t) => t.localPort) });

// Replies every 6 s, staggered over the first 6 s so they do not all start together.
const timers: NodeJS.Timeout[] = [];
transports.forEach((t, i) => {
  const first = 1000 + Math.floor((i * 6000) / N);
  for (let at = first; at + 3500 < S * 1000; at += 6000) timers.push(setTimeout(() => t.play(reply), at));
});

const underrunsNow = () => transports.reduce((a, t) => a + t.stats.tx.underruns, 0);
const at = (ms: number) =>
  new Promise<{ cpu: NodeJS.CpuUsage; underruns: number }>((r) =>
    setTimeout(() => r({ cpu: process.threadCpuUsage(), underruns: underrunsNow() }), ms),
  );
const [w0, w1] = await Promise.all([at(WARMUP_MS), at(S * 1000 - 500)]);
const [cpu0, cpu1] = [w0.cpu, w1.cpu];
const windowS = (S * 1000 - 500 - WARMUP_MS) / 1000;
const cpuUs = cpu1.user + cpu1.system - (cpu0.user + cpu0.system);

const results = await reports;
for (const t of timers) clearTimeout(t);
const stats = transports.map((t) => t.stats);
for (const t of transports) t.end("bench over");
await worker.terminate();

const lateness = results.flatMap((r) => r.latenessMs);
const sum = (f: (s: (typeof stats)[number]) => number) => stats.reduce((a, s) => a + f(s), 0);
console.log(
  JSON.stringify({
    bench: "sip-media",
    calls: N,
    seconds: S,
    codec: "pcmu",
    main_thread_cpu_pct: round((cpuUs / (windowS * 1e6)) * 100),
    cpu_us_per_call_s: round(cpuUs / windowS / N),
    rtp_lateness_ms: {
      p50: round(percentile(lateness, 50), 2),
      p99: round(percentile(lateness, 99), 2),
      max: round(percentile(lateness, 100), 2),
      packets: lateness.length,
    },
    frames_per_call: {
      expected: Math.floor(S * 50),
      min: Math.min(...frames),
      median: percentile(frames, 50),
    },
    packets_received_by_callers: results.reduce((a, r) => a + r.received, 0),
    underruns: sum((s) => s.tx.underruns),
    underruns_in_window: w1.underruns - w0.underruns,
    concealed: sum((s) => s.rx.concealedPackets),
    lost: sum((s) => s.rx.jitter.lost),
    dropped: sum((s) => Object.values(s.rx.dropped).reduce((a, b) => a + b, 0)),
    send_errors: sum((s) => s.tx.sendErrors),
  }),
);
