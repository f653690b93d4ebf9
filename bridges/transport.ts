// Shared entry point for transports: the port they implement (owned by the session, which
// must not import bridges) is re-exported here so each bridge imports from one place.
export type {
  AdmitCall,
  AgentAudio,
  CallInfo,
  CallTransport,
  DtmfOut,
  OpusPackets,
  OutputFormat,
  Speaker,
  TransportListener,
} from "../src/session/transport.ts";
export { OPUS_PACKET_MS } from "../src/session/transport.ts";
