// Bridges are closed by default (a token made at first start): tests that read /calls, open the
// console or its sockets send the bridge's own token, taken from the running bridge.
import type { Bridge } from "../../app/bridge/start.ts";

/** Authorization for the bridge's pages, records and sockets (none when its token is `off`). */
export function bearer(bridge: Pick<Bridge, "token">): Record<string, string> {
  return bridge.token ? { authorization: `Bearer ${bridge.token}` } : {};
}

/** GET (or other) on the bridge with its token. */
export function bridgeFetch(
  bridge: Pick<Bridge, "url" | "token">,
  path: string,
  init: RequestInit = {},
): Promise<Response> {
  return fetch(`${bridge.url}${path}`, {
    ...init,
    headers: { ...bearer(bridge), ...(init.headers as Record<string, string> | undefined) },
  });
}
