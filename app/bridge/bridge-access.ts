// The token the console, /calls and browser calls ask for: the configured one, else one made and
// kept in the data dir; `off` opens them (a warning, unless the bridge listens on loopback only).
import { isLoopbackHost } from "../../bridges/loopback.ts";
import type { Config } from "../../src/config/config.ts";
import type { Logger } from "../../src/core/log.ts";
import { type BridgeToken, resolveBridgeToken } from "../bridge-token.ts";
import { BridgeAccess } from "../http/access.ts";

export async function bridgeAccess(
  config: Config,
  log: Logger,
): Promise<{ token: BridgeToken; access: BridgeAccess }> {
  const token = await resolveBridgeToken(config.server.token, config.local.dataDir);
  if (token.source === "generated")
    log.info(
      { file: token.path },
      "bridge token: none configured (BRIDGE_TOKEN); made one and kept it in the file",
    );
  else if (token.source === "stored")
    log.info({ file: token.path }, "bridge token: the one kept in the file (BRIDGE_TOKEN unset)");
  else if (token.source === "off" && !isLoopbackHost(config.server.host))
    log.warn(
      { host: config.server.host },
      "BRIDGE_TOKEN=off: the console, every call record, recording and browser calls answer anyone who can reach this address",
    );
  return { token, access: new BridgeAccess(token.token) };
}
