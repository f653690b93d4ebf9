// SIP straight in, unless `sip.port` is off: the signalling server (UDP, TCP, TLS) and the RTP side,
// received on a thread of its own (`sip.rtpThread`, default) or on the bridge's; both on /metrics.
import { registerSipMetrics, type SipServer, startSipServer } from "../../bridges/sip/index.ts";
import {
  createRtpCallTransportFactory,
  type RtpWorker,
  registerRtpSendMetrics,
  startRtpWorker,
  UdpRtpPortPool,
} from "../../bridges/sip/rtp/index.ts";
import type { BridgeMetrics } from "../metrics/bridge-metrics.ts";
import { sipSettings } from "./transport-settings.ts";
import type { TransportDeps } from "./transports.ts";

export interface SipSide {
  readonly server: SipServer | undefined;
  readonly rtpWorker: RtpWorker | undefined;
}

export async function startSip(d: TransportDeps, metrics: BridgeMetrics): Promise<SipSide> {
  const { config, log } = d;
  const sip = config.sip;
  const { port } = sip;
  if (port === false) return { server: undefined, rtpWorker: undefined };
  const rtpWorker =
    sip.rtpThread === "worker"
      ? startRtpWorker({
          host: sip.host,
          ports: sip.rtpPorts,
          log,
          onShed: (frames, bytes) => {
            metrics.backlogDrops.inc({ queue: "sip_worker_frames" }, frames);
            metrics.backlogDroppedBytes.inc({ queue: "sip_worker_frames" }, bytes);
          },
        })
      : undefined;
  registerRtpSendMetrics(metrics.registry);
  const server = await startSipServer({
    config: sipSettings(sip, port),
    log,
    clock: d.clock,
    ports: rtpWorker ?? new UdpRtpPortPool({ host: sip.host, ports: sip.rtpPorts }),
    createTransport: createRtpCallTransportFactory(),
    onCall: d.onCall,
    admit: (info) => d.admission.admit(info),
    outbound: config.outbound.sip,
  });
  registerSipMetrics(metrics.registry, server);
  if (server.dial)
    log.info(
      { proxy: config.outbound.sip.proxy, from: config.outbound.sip.from },
      "outbound: SIP calls go through the outbound proxy (POST /calls, voice-bridge dial)",
    );
  return { server, rtpWorker };
}
