// Which agent takes a call: the routes in order, the first whose every given condition holds
// (transport, called number, caller, Discord guild or channel), else the agent named `default`.
// `to` and `from` are exact or patterns where `*` stands for any run of characters.

import type { Route } from "../config/routes.ts";
import type { CallInfo } from "../session/transport.ts";

/** True when `value` matches `pattern`: equal, or with `*` as any run of characters. */
export function matches(pattern: string, value: string | undefined): boolean {
  if (value === undefined) return false;
  if (!pattern.includes("*")) return pattern === value;
  const re = new RegExp(`^${pattern.split("*").map(escapeRe).join(".*")}$`, "s");
  return re.test(value);
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The first route whose conditions the call meets. */
export function routeFor(routes: readonly Route[], info: CallInfo): Route | undefined {
  return routes.find(
    (r) =>
      (r.transport === undefined || r.transport === info.transport) &&
      (r.to === undefined || matches(r.to, info.to)) &&
      (r.from === undefined || matches(r.from, info.from)) &&
      (r.guild === undefined || r.guild === info.params.guildId) &&
      (r.channel === undefined || r.channel === info.params.channelId),
  );
}
