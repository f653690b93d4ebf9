// `npm run bench -- amd [--concurrency N]`: answering-machine detection on the real SIP path. The
// bridge (in this process) dials each answer of the labelled set (bench/lib/amd-set.ts) through
// Kamailio (digest auth) to a baresip callee that auto-answers and plays it, with the policy
// `message`; the callee records what it hears. Prints one JSON line: accuracy, how long after a
// person stopped speaking the decision came (human_decision_ms_*), and how long after a voicemail's
// beep ended its recording heard the message start (beep_to_message_ms_*, from the recording).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { startBridge } from "../app/bridge/start.ts";
import { encodeWav, parseWav } from "../codecs/wav.ts";
import { loadConfig } from "../src/config/config.ts";
import { Baresip } from "../test/helpers/baresip.ts";
import { freePort as freeUdpPort } from "../test/helpers/free-port.ts";
import { firstLoudMs } from "../test/helpers/speech.ts";
import { loopbackSipEnv } from "../test/outbound/bridge-env.ts";
import { KamailioTrunk } from "../test/outbound/kamailio-trunk.ts";
import { type AmdCase, amdSet, RATE } from "./lib/amd-set.ts";
import { numberArg } from "./lib/args.ts";
import { machineBusyUs } from "./lib/calls-procs.ts";
import { percentile, round } from "./lib/measure.ts";

const concurrency = numberArg("concurrency", 6);
const TOKEN = "amd-bench-token-0123456789abcdef";
const dir = mkdtempSync(join(tmpdir(), "bench-amd-"));
const cases = amdSet();

interface Outcome {
  readonly c: AmdCase;
  readonly said?: string;
  readonly decidedAfterMs?: number;
  readonly messageHeardMs?: number;
  readonly error?: string;
}

const phones: Baresip[] = [];
let trunk: KamailioTrunk | undefined;
try {
  // One at a time (free ports are picked, then bound by baresip: parallel starts can collide), retried once.
  for (let i = 0; i < cases.length; i++) {
    const wav = join(dir, `case-${i}.wav`);
    writeFileSync(wav, encodeWav(cases[i]!.pcm, RATE));
    const start = () =>
      Baresip.start({ codec: "pcmu", wav, user: `c${i}`, accountParams: ";answermode=auto" });
    phones.push(await start().catch(start));
  }
  const trunkPort = await freeUdpPort();
  trunk = await KamailioTrunk.start({
    dir,
    port: trunkPort,
    user: "bench",
    password: "bench-secret",
    callees: Object.fromEntries(phones.map((p, i) => [String(3000 + i), { user: `c${i}`, port: p.sipPort }])),
  });
  const bridge = await startBridge(
    loadConfig({
      env: {
        ...loopbackSipEnv({ token: TOKEN, rtpPorts: "37000-37399", dir }),
        SIP_OUTBOUND_PROXY: `sip:127.0.0.1:${trunkPort}`,
        SIP_OUTBOUND_USER: "bench",
        SIP_OUTBOUND_PASSWORD: "bench-secret",
        OUTBOUND_MAX_CONCURRENT: String(concurrency),
        OUTBOUND_CALLS_PER_SECOND: "50",
        AGENT_GREETING: "Hello, this is the clinic calling about your appointment.",
      },
    }),
    pino({ level: process.env.BENCH_LOG ?? "silent" }),
  );
  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${bridge.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
  const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

  const one = async (index: number): Promise<Outcome> => {
    const c = cases[index]!;
    const res = await api("POST", "/calls", {
      to: String(3000 + index),
      via: "sip",
      machineDetection: "message",
      voicemailMessage: "This is the clinic. Please call us back about your appointment.",
    });
    const { callId } = (await res.json()) as { callId?: string };
    if (!callId) return { c, error: `POST /calls: HTTP ${res.status}` };
    const deadline = Date.now() + 45_000;
    let decidedAt: number | undefined;
    for (;;) {
      await wait(100);
      const r = bridge.transcripts.get(callId);
      if (r?.dialOutcome && decidedAt === undefined) decidedAt = Date.now();
      // A person: the greeting has started; the call is hung up after a moment of it.
      if (r?.dialOutcome === "human" && Date.now() - decidedAt! > 1500)
        await api("DELETE", `/calls/${callId}`);
      if (r?.endedAt || Date.now() > deadline) {
        if (!r?.endedAt) await api("DELETE", `/calls/${callId}`);
        await phones[index]!.waitFor("CALL_CLOSED", 10_000).catch(() => undefined);
        const heardFile = phones[index]!.dumps().heard;
        const heard = heardFile ? parseWav(new Uint8Array(readFileSync(heardFile))).samples : undefined;
        const messageHeardMs =
          c.truth === "machine" && r?.dialOutcome === "machine" && heard
            ? firstLoudMs(heard, RATE)
            : undefined;
        return {
          c,
          ...(r?.dialOutcome ? { said: r.dialOutcome } : {}),
          ...(r?.amd ? { decidedAfterMs: r.amd.decidedAfterMs } : {}),
          ...(messageHeardMs !== undefined ? { messageHeardMs } : {}),
        };
      }
    }
  };

  const t0 = Date.now();
  const cpu0 = process.cpuUsage();
  const busy0 = machineBusyUs();
  const outcomes: Outcome[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < cases.length) outcomes.push(await one(next++));
    }),
  );
  const wallUs = (Date.now() - t0) * 1000;
  const cpu = process.cpuUsage(cpu0);
  const busy = machineBusyUs() - busy0;
  await bridge.close(0);

  const humans = outcomes.filter((o) => o.c.truth === "human");
  const machines = outcomes.filter((o) => o.c.truth === "machine");
  const right = outcomes.filter((o) => o.said === o.c.truth);
  const humanMs = humans
    .filter((o) => o.said === "human" && o.decidedAfterMs !== undefined)
    .map((o) => o.decidedAfterMs! - o.c.speechEndMs!);
  const beepMs = machines
    .filter((o) => o.c.beepEndMs !== undefined && o.messageHeardMs !== undefined)
    .map((o) => o.messageHeardMs! - o.c.beepEndMs!);
  console.log(
    JSON.stringify({
      bench: "amd",
      path: "sip: bridge UAC -> kamailio (digest) -> baresip callee (pcmu)",
      cases: outcomes.length,
      humans: humans.length,
      machines: machines.length,
      machines_with_beep: machines.filter((o) => o.c.beepEndMs !== undefined).length,
      accuracy: round(right.length / outcomes.length, 3),
      human_accuracy: round(humans.filter((o) => o.said === "human").length / humans.length, 3),
      machine_accuracy: round(machines.filter((o) => o.said === "machine").length / machines.length, 3),
      human_decision_ms_p50: round(percentile(humanMs, 50), 0),
      human_decision_ms_p90: round(percentile(humanMs, 90), 0),
      beep_to_message_ms_p50: round(percentile(beepMs, 50), 0),
      beep_to_message_ms_p90: round(percentile(beepMs, 90), 0),
      beep_measured: beepMs.length,
      wrong: outcomes
        .filter((o) => o.said !== o.c.truth)
        .map((o) => `${o.c.name}: ${o.said ?? o.error ?? "none"}`),
      concurrency,
      other_cpu_cores: round(Math.max(0, busy - cpu.user - cpu.system) / wallUs, 2),
      shared_machine: true,
    }),
  );
} finally {
  await Promise.all(phones.map((p) => p.stop()));
  await trunk?.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
