// `npm run bench -- calls --transport sip --outbound`: the calls are placed by the bridge. The
// main run (bench/calls.ts) is the inbound run's, with the load generator as the callee
// (calls-load-sip-out.ts): the same figures per call-second. This is the set-up cost on its own,
// measured after it while the bridge is otherwise idle: M calls one after another, each placed by
// POST /calls, answered at once (INVITE, 200 with SDP, ACK), its session started (the greeting
// asked of the separate service process, as inbound), held `hold` seconds and hung up by the
// callee, then a pause for the bridge to finish with it. The bridge's CPU over them, less what it
// spends idle over as long (measured just before), per call is setup_cpu_ms_per_call (set-up and
// tear-down, with `hold` seconds of media); dial_setup_ms is POST /calls to answered, from the
// records (read afterwards, so that reading them is not counted). Then the same M calls placed
// to the bridge by a caller that hangs up as soon: inbound_setup_cpu_ms_per_call, to compare.

import { processCpuUs } from "./calls-procs.ts";
import { quietLine } from "./calls-setup.ts";
import { percentile, round } from "./measure.ts";
import { postCall } from "./sip-out-load.ts";
import { placeSipCall } from "./sip-uac.ts";
import { BenchUas } from "./sip-uas.ts";

/** After each call: the bridge's end of it (store, report) done before the next, ms. */
const PAUSE_MS = 300;

export interface SetupCostOptions {
  url: string;
  token: string | undefined;
  uasPort: number;
  bridgePid: number;
  /** The bridge's SIP address, for the same calls the other way (the inbound set-up cost beside it). */
  sip: { address: string; port: number };
  calls: number;
  holdS: number;
}

export async function outboundSetupCost(o: SetupCostOptions): Promise<Record<string, unknown>> {
  const uas = await BenchUas.listen(o.uasPort);
  const caller = quietLine(o.holdS);
  const dialMs: number[] = [];
  const errors: string[] = [];
  const headers: Record<string, string> = o.token ? { authorization: `Bearer ${o.token}` } : {};
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  // The idle bridge's own CPU (timers, metrics), to take off.
  const idle0 = processCpuUs(o.bridgePid);
  const idleT0 = performance.now();
  await sleep(2000);
  const idleUsPerMs = (processCpuUs(o.bridgePid) - idle0) / (performance.now() - idleT0);
  const ids: string[] = [];
  const cpu0 = processCpuUs(o.bridgePid);
  const t0 = performance.now();
  try {
    for (let i = 0; i < o.calls; i++) {
      const callId = await postCall(o.url, o.token, `+1555018${String(i).padStart(4, "0")}`);
      ids.push(callId);
      const r = await uas.answer(callId, { caller, seconds: o.holdS });
      if (r.error) errors.push(r.error);
      await sleep(PAUSE_MS);
    }
  } finally {
    await uas.close();
  }
  const cpuUs = processCpuUs(o.bridgePid) - cpu0 - idleUsPerMs * (performance.now() - t0);
  // The same calls placed to the bridge (a caller that hangs up after as long): the inbound cost.
  const in0 = processCpuUs(o.bridgePid);
  const inT0 = performance.now();
  for (let i = 0; i < o.calls; i++) {
    const r = await placeSipCall({ target: o.sip, caller, seconds: o.holdS });
    if (r.error) errors.push(`inbound: ${r.error}`);
    await sleep(PAUSE_MS);
  }
  const inboundUs = processCpuUs(o.bridgePid) - in0 - idleUsPerMs * (performance.now() - inT0);
  for (const callId of ids) {
    const rec = (await (await fetch(`${o.url}/calls/${callId}`, { headers })).json()) as {
      startedAt?: string;
      events?: Array<{ type: string; at: string }>;
    };
    const dial = rec.events?.find((e) => e.type === "dial");
    if (dial && rec.startedAt) dialMs.push(Date.parse(dial.at) - Date.parse(rec.startedAt));
  }
  return {
    setup_calls: o.calls,
    setup_hold_s: o.holdS,
    setup_cpu_ms_per_call: round(cpuUs / 1000 / o.calls, 1),
    inbound_setup_cpu_ms_per_call: round(inboundUs / 1000 / o.calls, 1),
    setup_idle_cpu_pct: round(idleUsPerMs / 10, 2),
    dial_setup_ms_p50: round(percentile(dialMs, 50), 1),
    dial_setup_ms_p90: round(percentile(dialMs, 90), 1),
    setup_errors: errors,
  };
}
