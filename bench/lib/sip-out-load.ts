// The calls of `calls --transport sip --outbound`'s load generator: each placed by the bridge
// (POST /calls at its start time, machine detection off) to the load generator's SIP socket (the
// bridge's SIP_OUTBOUND_PROXY), answered at once and run like an inbound benchmark call from the
// answer on (sip-uas.ts): the same caller timeline, the same timing of the agent's RTP, the same
// report (sip-load.ts), so calls-summary.ts prints the same figures for calls the bridge placed.
import type { CallReport } from "./calls-load.ts";
import { failedCall } from "./load-window.ts";
import { callerUntilTail, reportOf, type SipLoadSpec } from "./sip-load.ts";
import type { BenchUas } from "./sip-uas.ts";

export interface SipOutLoadSpec extends SipLoadSpec {
  /** The UDP port the bridge's SIP_OUTBOUND_PROXY names: this process answers there. */
  uasPort: number;
  url: string;
}

/** Places one call through the bridge's POST /calls: its call id, or why not. */
export async function postCall(
  url: string,
  token: string | undefined,
  to: string,
  machineDetection: "off" | "hangup" | "message" = "off",
): Promise<string> {
  const res = await fetch(`${url}/calls`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ to, via: "sip", machineDetection }),
  });
  const body = (await res.json()) as { callId?: string; error?: { message?: string } };
  if (res.status !== 202 || !body.callId)
    throw new Error(`POST /calls: ${res.status} ${body.error?.message ?? JSON.stringify(body)}`);
  return body.callId;
}

export async function runOutboundCalls(
  spec: SipOutLoadSpec,
  caller: Int16Array,
  uas: BenchUas,
): Promise<CallReport[]> {
  return Promise.all(
    spec.startsAtMs.map(async (at, i): Promise<CallReport> => {
      const wait = at - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      let callId: string;
      try {
        callId = await postCall(spec.url, spec.bridgeToken, `+1555010${String(i).padStart(4, "0")}`);
      } catch (err) {
        return failedCall(`call-${i}`, (err as Error).message);
      }
      const r = await uas.answer(callId, {
        caller: callerUntilTail(caller, spec.seconds),
        seconds: spec.seconds,
      });
      return reportOf(spec, r);
    }),
  );
}
