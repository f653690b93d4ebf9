// `npm run bench -- sip [--calls N] [--rate R] [--limit L] [--tcp]`: SIP signalling capacity.
//
// SIPp's built-in UAC places N calls (INVITE, 200, ACK, BYE) at R calls/s, at most L at once,
// against the SIP server in this process over UDP (or TCP). The media side is a bench stand-in:
// each call gets a real UDP socket as its RTP port and a transport that does nothing, so what is
// measured is signalling alone. Figures: call setup time (INVITE sent → 200 received, SIPp's
// response-time trace, ms resolution), the calls/s achieved, and this process's CPU per call.
import { spawn } from "node:child_process";
import { createSocket } from "node:dgram";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSipServer } from "../bridges/sip/index.ts";
import type { RtpEndpoint, RtpPortPool, SipCallTransport } from "../bridges/sip/media-port.ts";
import { systemClock } from "../src/core/clock.ts";
import { silentLogger } from "../src/core/log.ts";
import { numberArg } from "./lib/args.ts";
import { percentile, round } from "./lib/measure.ts";

const arg = numberArg;
const CALLS = arg("calls", 2000);
const RATE = arg("rate", 200);
const LIMIT = arg("limit", 500);
const TCP = process.argv.includes("--tcp");

async function freeUdpPort(): Promise<number> {
  const s = createSocket("udp4");
  const port = await new Promise<number>((resolve) =>
    s.bind(0, "127.0.0.1", () => resolve(s.address().port)),
  );
  s.close();
  return port;
}

let inUse = 0;
const pool: RtpPortPool = {
  get inUse() {
    return inUse;
  },
  async open(): Promise<RtpEndpoint> {
    const socket = createSocket("udp4");
    await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
    inUse++;
    let closed = false;
    return {
      port: socket.address().port,
      close() {
        if (closed) return;
        closed = true;
        inUse--;
        socket.close();
      },
    };
  },
};

const server = await startSipServer({
  config: { port: 0, host: "127.0.0.1", codecs: ["pcmu"], mediaTimeoutS: 30 },
  log: silentLogger,
  clock: systemClock,
  ports: pool,
  createTransport: (o): SipCallTransport => ({
    info: o.info,
    inputRate: 8000,
    output: { kind: "pcm", rate: 8000 },
    attach() {},
    play() {},
    clear() {},
    queuedMs: () => 0,
    playedMs: () => 0,
    hangUp: (reason) => o.control.hangUp(reason),
    transfer: (target) => o.control.transfer(target),
    updateMedia() {},
    digitFromInfo() {},
    end: () => o.endpoint.close(),
  }),
  onCall: () => {},
});

const dir = mkdtempSync(join(tmpdir(), "bench-sip-"));
const target = `127.0.0.1:${TCP ? server.tcpPort : server.udpPort}`;
const args = ["-sn", "uac", target, "-i", "127.0.0.1", "-bind_local", "-p", String(await freeUdpPort())];
args.push("-mp", String(await freeUdpPort()), "-cp", String(await freeUdpPort()));
args.push("-r", String(RATE), "-m", String(CALLS), "-l", String(LIMIT), "-nostdin", "-timeout", "300s");
args.push("-trace_rtt", "-rtt_freq", "1", ...(TCP ? ["-t", "t1"] : []));

const cpu0 = process.cpuUsage();
const t0 = performance.now();
const child = spawn("sipp", args, { cwd: dir, stdio: "ignore" });
const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
const wallS = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);

const rttFile = readdirSync(dir).find((f) => f.endsWith("_rtt.csv"));
const setupMs = rttFile
  ? readFileSync(join(dir, rttFile), "utf8")
      .split("\n")
      .slice(1)
      .filter(Boolean)
      .map((line) => Number(line.split(";")[1]))
  : [];
rmSync(dir, { recursive: true, force: true });
const calls = server.stats.calls;
await server.close();

console.log(
  JSON.stringify({
    bench: "sip",
    transport: TCP ? "tcp" : "udp",
    callsPlaced: CALLS,
    rateCps: RATE,
    sippExit: code,
    callsAnswered: calls,
    achievedCps: round(calls / wallS),
    setupMsP50: setupMs.length ? percentile(setupMs, 50) : null,
    setupMsP99: setupMs.length ? percentile(setupMs, 99) : null,
    setupMsMax: setupMs.length ? Math.max(...setupMs) : null,
    cpuUsPerCall: Math.round((cpu.user + cpu.system) / Math.max(1, calls)),
    rssMb: round(process.memoryUsage().rss / 2 ** 20),
    portsLeft: inUse,
  }),
);
