// The transport-specific parts of `npm run bench -- calls --transport twilio|sip`: how the bridge
// is told to listen, where its callers reach it, the warm-up calls, and which load generator runs
// the calls with what spec. Everything else (service, bridge process, window, CPU/RSS sampling,
// the summary) is the same for both and stays in bench/calls.ts.
import type { ChildProcess } from "node:child_process";
import { simulateCall } from "../../tools/twilio-sim/simulate.ts";
import type { BenchTransport } from "./calls-bridge-ends.ts";
import type { LoadSpec } from "./calls-load.ts";
import { waitForLine } from "./calls-procs.ts";
import type { SipLoadSpec } from "./sip-load.ts";
import { postCall, type SipOutLoadSpec } from "./sip-out-load.ts";
import { placeSipCall } from "./sip-uac.ts";
import { BenchUas } from "./sip-uas.ts";

/** What every load generator gets, whatever the transport. */
export interface CommonLoad {
  timelinePath: string;
  seconds: number;
  startsAtMs: number[];
  windowMs: [number, number];
  /** The bridge's token (made at its first start, kept in its data dir), for GET /calls/:id. */
  bridgeToken?: string | undefined;
}

export interface BenchBridge {
  /** Environment of the bridge process beyond the common part (which includes TWILIO_AUTH_TOKEN). */
  env: NodeJS.ProcessEnv;
  /** Once the bridge logged that it listens: whatever its callers need to reach it. */
  ready(bridgeUrl: string, bridgeLog: string, bridge: ChildProcess): Promise<BenchTarget>;
}

export interface BenchTarget {
  /** Two short calls so that code paths are compiled and pools filled before the idle footprint. */
  warmUp(caller: Int16Array): Promise<void>;
  /** The load generator script (relative to the repository root) and its spec. */
  loadScript: string;
  loadSpec(common: CommonLoad): LoadSpec | SipLoadSpec | SipOutLoadSpec;
}

/** `--outbound`: the bridge places the calls, to a callee answering on this UDP port. */
export interface BenchOutbound {
  uasPort: number;
}

/** The bridge's token with --outbound (its POST /calls needs it from the start, warm-up included). */
export const OUTBOUND_TOKEN = "bench-outbound-token-0123456789";

/** Twilio requests are signed with it; set on the bridge whatever the transport, as deployed. */
export const TWILIO_TOKEN = "bench-twilio-token";

/** With `tls`, SIP goes over TLS to the bridge's TLS port, with this certificate and key (PEM files). */
export interface BenchTls {
  cert: string;
  key: string;
}

export function benchBridge(
  transport: BenchTransport,
  rtpPorts: string,
  srtp = false,
  tls?: BenchTls,
  outbound?: BenchOutbound,
): BenchBridge {
  if (outbound) return sipOutboundBridge(rtpPorts, outbound);
  return transport === "twilio" ? twilioBridge() : sipBridge(rtpPorts, srtp, tls);
}

/** The bridge dials every call (POST /calls) through SIP_OUTBOUND_PROXY, the load generator's callee socket. */
function sipOutboundBridge(rtpPorts: string, o: BenchOutbound): BenchBridge {
  return {
    env: {
      SIP_HOST: "127.0.0.1",
      SIP_PORT: "0",
      RTP_PORTS: rtpPorts,
      BRIDGE_TOKEN: OUTBOUND_TOKEN,
      SIP_OUTBOUND_PROXY: `sip:127.0.0.1:${o.uasPort}`,
      SIP_OUTBOUND_FROM: "+15550199",
      OUTBOUND_MAX_CONCURRENT: "1000",
      OUTBOUND_CALLS_PER_SECOND: "1000",
    },
    ready: async (url, bridgeLog, bridge) => {
      const line = await waitForLine(bridgeLog, /"udpPort":(\d+)[^\n]*"sip: listening"/, 30_000, bridge);
      const target = { address: "127.0.0.1", port: Number(line[1]) };
      return {
        warmUp: async (caller) => {
          // The callee socket is the load generator's later: here for the warm-up calls only.
          const uas = await BenchUas.listen(o.uasPort);
          try {
            const calls = await Promise.all(
              [0, 1].map(async (i) =>
                uas.answer(await postCall(url, OUTBOUND_TOKEN, `+1555019900${i}`), { caller, seconds: 9 }),
              ),
            );
            const failed = calls.find((c) => c.error);
            if (failed) throw new Error(`outbound warm-up call failed: ${failed.error}`);
          } finally {
            await uas.close();
          }
        },
        loadScript: "bench/lib/calls-load-sip-out.ts",
        loadSpec: (common): SipOutLoadSpec => ({ target, url, uasPort: o.uasPort, ...common }),
      };
    },
  };
}

function twilioBridge(): BenchBridge {
  return {
    env: { SIP_PORT: "off" },
    ready: async (url) => ({
      warmUp: async (caller) => {
        await Promise.all(
          [0, 1].map(() =>
            simulateCall({
              url,
              authToken: TWILIO_TOKEN,
              caller: { samples: caller, rate: 8000 },
              maxSeconds: 9,
              fetchTranscript: false,
            }),
          ),
        );
      },
      loadScript: "bench/lib/calls-load.ts",
      loadSpec: (common): LoadSpec => ({ url, authToken: TWILIO_TOKEN, ...common }),
    }),
  };
}

function sipBridge(rtpPorts: string, srtp: boolean, tls: BenchTls | undefined): BenchBridge {
  return {
    // Port 0: the bridge picks a free one and logs it; RTP from a range the calls fit in.
    env: {
      SIP_HOST: "127.0.0.1",
      SIP_PORT: "0",
      RTP_PORTS: rtpPorts,
      ...(tls ? { SIP_TLS_PORT: "0", SIP_TLS_CERT: tls.cert, SIP_TLS_KEY: tls.key } : {}),
    },
    ready: async (url, bridgeLog, bridge) => {
      const line = await waitForLine(
        bridgeLog,
        tls ? /"tlsPort":(\d+)[^\n]*"sip: listening"/ : /"udpPort":(\d+)[^\n]*"sip: listening"/,
        30_000,
        bridge,
      );
      const target = { address: "127.0.0.1", port: Number(line[1]) };
      const secure = tls ? { tls: true } : {};
      return {
        warmUp: async (caller) => {
          const calls = await Promise.all(
            [0, 1].map(() => placeSipCall({ target, caller, seconds: 9, srtp, ...secure })),
          );
          const failed = calls.find((c) => c.error);
          if (failed) throw new Error(`SIP warm-up call failed: ${failed.error}`);
        },
        loadScript: "bench/lib/calls-load-sip.ts",
        loadSpec: (common): SipLoadSpec => ({ target, url, ...common, ...(srtp ? { srtp } : {}), ...secure }),
      };
    },
  };
}
