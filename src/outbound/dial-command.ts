// `voice-bridge dial TO`: asks the running bridge to place a call (POST /calls with its token),
// then follows the call's record until dialling settles and the call ends, saying how it went.
import type { DialBody } from "./request.ts";

export interface DialCommandOptions {
  readonly base: string;
  readonly token: string | undefined;
  readonly body: DialBody | Record<string, unknown>;
  /** Follow the call until it ends (default), or return once it is placed. */
  readonly wait: boolean;
  readonly out: (line: string) => void;
}

interface RecordView {
  dialOutcome?: string;
  dialReason?: string;
  amd?: { result: string; decidedAfterMs: number; beepEndedAtMs?: number };
  endedAt?: string;
  endReason?: string;
}

/** Parses repeated `--var name=value` options. */
export function parseVars(list: readonly string[]): Record<string, string> {
  const vars: Record<string, string> = {};
  for (const item of list) {
    const eq = item.indexOf("=");
    if (eq <= 0) throw new Error(`--var ${item}: expected name=value`);
    vars[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return vars;
}

/** Places the call; the process exit code: 0 answered (or placed, without waiting), 2 unanswered, 1 refused. */
export async function runDial(o: DialCommandOptions): Promise<number> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  const res = await fetch(`${o.base}/calls`, { method: "POST", headers, body: JSON.stringify(o.body) });
  const answer = (await res.json().catch(() => ({}))) as { callId?: string; error?: { message?: string } };
  if (res.status !== 202 || !answer.callId) {
    const retry = res.headers.get("retry-after");
    o.out(
      `refused (HTTP ${res.status}): ${answer.error?.message ?? res.statusText}${retry ? ` (retry after ${retry} s)` : ""}`,
    );
    return 1;
  }
  const callId = answer.callId;
  o.out(`placed: ${callId} (GET ${o.base}/calls/${callId})`);
  if (!o.wait) return 0;
  let said = false;
  for (;;) {
    await new Promise((r) => setTimeout(r, 500));
    const r = await fetch(`${o.base}/calls/${callId}`, { headers });
    if (!r.ok) continue;
    const record = (await r.json()) as RecordView;
    if (record.dialOutcome && !said) {
      said = true;
      const amd = record.amd
        ? ` (detection: ${record.amd.result} after ${record.amd.decidedAfterMs} ms${record.amd.beepEndedAtMs !== undefined ? `, beep ended at ${record.amd.beepEndedAtMs} ms` : ""})`
        : "";
      o.out(`dial outcome: ${record.dialOutcome}${record.dialReason ? ` — ${record.dialReason}` : ""}${amd}`);
    }
    if (record.endedAt) {
      o.out(`ended: ${record.endReason ?? "(no reason)"}`);
      return record.dialOutcome === "human" || record.dialOutcome === "machine" ? 0 : 2;
    }
  }
}
