// SIP media (RTP) for the SIP signalling: the port pool that hands each call its RTP socket,
// and the factory that turns an answered call's negotiated media into the session's transport.
export { createRtpCallTransportFactory, RtpCallTransport, type RtpCallTuning } from "./call-transport.ts";
export { registerRtpSendMetrics } from "./native-sender.ts";
export { parsePortRange, UdpRtpEndpoint, UdpRtpPortPool, type UdpRtpPortPoolOptions } from "./port-pool.ts";
export { type RtpWorker, startRtpWorker } from "./worker-pool.ts";
