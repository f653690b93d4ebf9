// The agents phase of `npm run bench -- calls` (Twilio): once the load is over, the same bridge is
// reloaded with one agent (a fixed greeting with a variable) behind two numbers, the second's
// route asking a call-start webhook on loopback that answers at once; M calls to each, one after
// another, alternating. Figures:
//   agent_pick_ms_p50/_p99        routing plus the webhook (the bridge's own log of each pick)
//   agent_webhook_answer_ms_p50   the webhook's round trip, as the bridge timed it
//   agent_pick_overhead_ms_p50    pick minus the webhook's round trip: what the bridge adds
//   greeting_first_audio_ms_p50 / _with_webhook_ms_p50   the voice webhook POST sent → the
//                                 greeting's first audio at the caller (Twilio simulator)
import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { bearer } from "../../src/service/engines/upstream.ts";
import { simulateCall } from "../../tools/twilio-sim/simulate.ts";
import { percentile, round } from "./measure.ts";

export interface AgentsPhase {
  bridgeUrl: string;
  bridgeLog: string;
  configPath: string;
  /** The config file as the load ran with it (the phase adds to it). */
  baseConfig: string;
  authToken: string;
  /** The bridge's token: reload asks for it when the bridge has one (closed by default). */
  bridgeToken: string | undefined;
  calls: number;
}

/** The same agent behind two numbers: the second's route asks a webhook first. */
const PLAIN = "+15550001";
const HOOKED = "+15550002";

async function reload(bridgeUrl: string, bridgeToken: string | undefined): Promise<void> {
  const res = await fetch(`${bridgeUrl}/admin/reload`, { method: "POST", headers: bearer(bridgeToken) });
  if (!res.ok) throw new Error(`reload refused: HTTP ${res.status} ${await res.text()}`);
}

/** The greeting's first audio after the voice webhook POST is sent, ms (undefined: none came). */
async function greeting(o: AgentsPhase, to: string): Promise<number | undefined> {
  const started = performance.now();
  let first: number | undefined;
  await simulateCall({
    url: o.bridgeUrl,
    authToken: o.authToken,
    to,
    maxSeconds: 1.5,
    fetchTranscript: false,
    onEvent: (e) => {
      if (e.kind === "agent-audio" && first === undefined) first = performance.now();
    },
  });
  return first === undefined ? undefined : first - started;
}

export async function agentsPhase(o: AgentsPhase): Promise<Record<string, number | null>> {
  const hook = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"variables":{"tier":"gold"}}');
    });
  });
  await new Promise<void>((r) => hook.listen(0, "127.0.0.1", r));
  const hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/agent`;
  try {
    writeFileSync(
      o.configPath,
      [
        o.baseConfig,
        "agents:",
        "  sales:",
        "    greeting: Thanks for calling the {{var.tier}} line.",
        "routes:",
        `  - { to: "${PLAIN}", agent: sales }`,
        `  - { to: "${HOOKED}", agent: sales, agentWebhook: { url: "${hookUrl}", secret: bench-webhook-secret-0123, timeoutMs: 1500 } }`,
        "",
      ].join("\n"),
    );
    await reload(o.bridgeUrl, o.bridgeToken);
    const logStart = readFileSync(o.bridgeLog, "utf8").length;
    // Alternated, so that warm-up and the machine's other work weigh on both alike.
    const plain: number[] = [];
    const hooked: number[] = [];
    for (let i = 0; i < o.calls; i++) {
      const a = await greeting(o, PLAIN);
      if (a !== undefined) plain.push(a);
      const b = await greeting(o, HOOKED);
      if (b !== undefined) hooked.push(b);
    }
    const picks = readFileSync(o.bridgeLog, "utf8")
      .slice(logStart)
      .split("\n")
      .filter((l) => l.includes('takes the call"') && l.includes('"webhookMs"'))
      .map((l) => JSON.parse(l) as { pickMs: number; webhookMs: number });
    const pick = picks.map((p) => p.pickMs);
    const answer = picks.map((p) => p.webhookMs);
    const overhead = picks.map((p) => p.pickMs - p.webhookMs);
    const p = (v: number[], q: number) => (v.length ? round(percentile(v, q), 2) : null);
    return {
      agent_pick_calls: picks.length,
      agent_pick_ms_p50: p(pick, 50),
      agent_pick_ms_p99: p(pick, 99),
      agent_webhook_answer_ms_p50: p(answer, 50),
      agent_pick_overhead_ms_p50: p(overhead, 50),
      greeting_first_audio_ms_p50: p(plain, 50),
      greeting_first_audio_with_webhook_ms_p50: p(hooked, 50),
    };
  } finally {
    hook.close();
  }
}
