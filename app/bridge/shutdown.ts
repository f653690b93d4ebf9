// Stopping the bridge: no new calls (SIP and load-balancer probes get 503 from the start), the live
// ones let finish up to the drain time, then ended, then everything closed, transports first and
// the records last (a call's last events and report still have somewhere to go).
import type { FastifyInstance } from "fastify";
import type { AudioSocketServer } from "../../bridges/audiosocket/index.ts";
import type { BrowserCalls } from "../../bridges/browser/index.ts";
import type { DiscordBot } from "../../bridges/discord/index.ts";
import type { TwilioRoutes } from "../../bridges/twilio/index.ts";
import type { Logger } from "../../src/core/log.ts";
import type { OutboundCalls } from "../../src/outbound/calls.ts";
import { BRIDGE_SHUTDOWN } from "../../src/records/outcome.ts";
import type { LocalService } from "../../src/service/index.ts";
import type { CallSession } from "../../src/session/call-session.ts";
import type { BridgeMetrics } from "../metrics/bridge-metrics.ts";
import type { Tracing } from "../tracing/tracing.ts";
import type { BridgeMcp } from "./mcp.ts";
import type { Records } from "./records.ts";
import type { SipSide } from "./sip.ts";

/** What a bridge holds open, in the order it is closed. */
export interface RunningParts {
  readonly live: ReadonlySet<CallSession>;
  readonly outbound: OutboundCalls;
  readonly discord: DiscordBot | undefined;
  readonly twilio: TwilioRoutes;
  readonly browser: BrowserCalls | undefined;
  readonly sip: SipSide;
  readonly audioSocket: AudioSocketServer | undefined;
  readonly http: FastifyInstance;
  readonly records: Records;
  readonly localService: LocalService | undefined;
  readonly metrics: BridgeMetrics;
  /** The agents' MCP servers: closed once no call can use their tools. */
  readonly mcp: BridgeMcp;
  /** The calls' traces: what is not exported yet is sent once the last call has ended. */
  readonly tracing: Tracing | undefined;
  readonly log: Logger;
}

/** Drains and closes; the caller has already stopped taking new calls (its draining flag). */
export async function shutDown(p: RunningParts, drainMs: number): Promise<void> {
  const { live, log } = p;
  // New SIP calls and load-balancer probes get 503 + Retry-After from now on.
  void p.sip.server?.drain();
  const deadline = Date.now() + drainMs;
  if (live.size) log.info({ calls: live.size, drainMs }, "draining: waiting for live calls to end");
  while (live.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  for (const session of live) session.end(BRIDGE_SHUTDOWN);
  p.outbound.shutDown();
  await p.discord?.close();
  p.twilio.closeAll(1001, "bridge shutting down");
  p.browser?.closeAll(1001, "bridge shutting down");
  await p.sip.server?.close();
  await p.sip.rtpWorker?.close();
  await p.audioSocket?.close();
  await p.mcp.close();
  await p.http.close();
  await p.records.recorder?.close();
  await p.records.reporter?.close();
  await p.records.store.close();
  await p.localService?.close();
  await p.tracing?.shutdown();
  p.metrics.close();
}
