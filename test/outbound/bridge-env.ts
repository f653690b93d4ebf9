// The environment of a bridge that takes and places SIP calls on loopback only: what the outbound
// tests and the AMD benchmark share before their own trunk and agent settings.
import { join } from "node:path";

export function loopbackSipEnv(o: { token: string; rtpPorts: string; dir: string }): Record<string, string> {
  return {
    HOST: "127.0.0.1",
    PORT: "0",
    BRIDGE_TOKEN: o.token,
    SIP_HOST: "127.0.0.1",
    SIP_PORT: "0",
    RTP_PORTS: o.rtpPorts,
    SIP_CODECS: "pcmu",
    SVC_LOCAL_DATA_DIR: join(o.dir, "data"),
  };
}
