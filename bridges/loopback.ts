// Who counts as "this machine": a door that is open only to loopback callers (Twilio's routes
// without TWILIO_AUTH_TOKEN) asks this of the socket's address, and the bridge asks it of the
// address it listens on before it warns that an open door faces the network.
import type { IncomingHttpHeaders } from "node:http";

/** True for an address or host name only this machine reaches (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "").toLowerCase();
  return h === "localhost" || h === "::1" || /^127\./.test(h) || /^::ffff:127\./.test(h);
}

/**
 * A request from this machine that did not come through a proxy: a reverse proxy or tunnel on the
 * same host (ngrok, nginx) connects from loopback too, but says whom it forwards for.
 */
export function isLoopbackCaller(remoteAddress: string | undefined, headers: IncomingHttpHeaders): boolean {
  if (remoteAddress === undefined || !isLoopbackHost(remoteAddress)) return false;
  return headers["x-forwarded-for"] === undefined && headers.forwarded === undefined;
}
