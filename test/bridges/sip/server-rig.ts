// A real SIP server (UDP and TCP on ephemeral ports of 127.0.0.1) with the test-double media side.

import {
  type SipServer,
  type SipServerOptions,
  type SipTimers,
  startSipServer,
} from "../../../bridges/sip/index.ts";
import { systemClock } from "../../../src/core/clock.ts";
import { silentLogger } from "../../../src/core/log.ts";
import { TestRtpPortPool, type TestSipTransport, testTransportFactory } from "./test-media.ts";

export interface ServerRig {
  readonly server: SipServer;
  readonly pool: TestRtpPortPool;
  readonly made: TestSipTransport[];
  readonly target: string;
  readonly tcpTarget: string;
}

export async function startServerRig(
  opts: {
    timers?: SipTimers;
    onCall?: (t: TestSipTransport) => void;
    /** Access keys (allowFrom, rateLimit, users …) over the test's defaults. */
    sip?: Partial<SipServerOptions["config"]>;
    registrationTiming?: SipServerOptions["registrationTiming"];
  } = {},
): Promise<ServerRig> {
  const pool = new TestRtpPortPool();
  const media = testTransportFactory();
  const server = await startSipServer({
    config: {
      port: 0,
      host: "127.0.0.1",
      codecs: ["opus", "pcmu", "pcma"],
      mediaTimeoutS: 30,
      ...opts.sip,
    },
    log: silentLogger,
    clock: systemClock,
    ports: pool,
    createTransport: media.create,
    onCall: (t) => opts.onCall?.(t as TestSipTransport),
    ...(opts.timers ? { timers: opts.timers } : {}),
    ...(opts.registrationTiming ? { registrationTiming: opts.registrationTiming } : {}),
  });
  return {
    server,
    pool,
    made: media.made,
    target: `127.0.0.1:${server.udpPort}`,
    tcpTarget: `127.0.0.1:${server.tcpPort}`,
  };
}
