// The callers of `npm run bench -- sip-media`, in a worker thread so that their work is not
// counted as the bridge's (the main thread's CPU is measured alone): each has a UDP socket,
// sends the shared caller timeline as 20 ms PCMU RTP from one timer loop with catch-up, and
// times every RTP packet it receives against the packet's timestamp (rtp-lateness.ts).
import dgram from "node:dgram";
import { parentPort, workerData } from "node:worker_threads";
import { buildRtp, emptyRtpHeader, parseRtp } from "../../bridges/sip/rtp/rtp-packet.ts";
import { RtpLateness } from "./rtp-lateness.ts";

export interface CallersData {
  calls: number;
  /** µ-law bytes of what every caller says, 8 kHz. */
  timeline: Uint8Array;
  seconds: number;
  /** Packets received before this many ms from the start are not timed (warm-up). */
  warmupMs: number;
}

export interface CallerReport {
  sent: number;
  received: number;
  latenessMs: number[];
  streams: number;
}

if (!parentPort) throw new Error("sip-media-callers.ts runs as a worker thread");
const port = parentPort;
const data = workerData as CallersData;

const sockets = await Promise.all(
  Array.from(
    { length: data.calls },
    () =>
      new Promise<dgram.Socket>((resolve) => {
        const s = dgram.createSocket("udp4");
        s.bind(0, "127.0.0.1", () => resolve(s));
      }),
  ),
);
port.postMessage({ ports: sockets.map((s) => s.address().port) });
const targets = await new Promise<number[]>((resolve) =>
  port.once("message", (m: { targets: number[] }) => resolve(m.targets)),
);

const t0 = performance.now();
const reports: CallerReport[] = sockets.map(() => ({ sent: 0, received: 0, latenessMs: [], streams: 0 }));
const meters = sockets.map(() => new RtpLateness(8000));
const h = emptyRtpHeader();
sockets.forEach((s, i) => {
  s.on("message", (msg) => {
    const now = performance.now();
    if (parseRtp(msg, h)) return;
    reports[i]!.received++;
    if (now - t0 >= data.warmupMs) meters[i]!.add(now, h.timestamp, h.ssrc);
  });
});

const frames = Math.floor(Math.min(data.timeline.length, data.seconds * 8000) / 160);
const ssrcs = sockets.map((_, i) => 0x1000 + i);
let next = 0;
await new Promise<void>((resolve) => {
  const pump = () => {
    const due = Math.min(frames, Math.floor((performance.now() - t0) / 20) + 1);
    for (; next < due; next++) {
      const payload = data.timeline.subarray(next * 160, (next + 1) * 160);
      for (let i = 0; i < sockets.length; i++) {
        const packet = buildRtp({
          payloadType: 0,
          sequence: next & 0xffff,
          timestamp: next * 160,
          ssrc: ssrcs[i]!,
          payload,
        });
        sockets[i]!.send(packet, targets[i]!, "127.0.0.1");
        reports[i]!.sent++;
      }
    }
    if (next >= frames) resolve();
    else setTimeout(pump, Math.max(0, t0 + next * 20 - performance.now()));
  };
  pump();
});
// Let the last packets in flight arrive.
await new Promise((r) => setTimeout(r, 200));
for (const [i, m] of meters.entries()) {
  reports[i]!.latenessMs = m.latenessMs;
  reports[i]!.streams = m.streams;
}
await Promise.all(sockets.map((s) => new Promise<void>((r) => s.close(() => r()))));
port.postMessage({ reports });
