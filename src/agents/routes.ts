// Which agent takes a call: the routes in order, the first whose every given condition holds
// (transport, called number, caller, Discord guild or channel), else the agent named `default`.
// `to` and `from` are exact or patterns where `*` stands for any run of characters.
import { z } from "zod";
import { url } from "../config-values.ts";
import type { CallInfo } from "../session/transport.ts";
import { agentName } from "./schema.ts";

export const TRANSPORTS = ["twilio", "sip", "audiosocket", "browser", "discord"] as const;

/** The call-start webhook: asked which agent, with which variables and overrides (see webhook.ts). */
export const webhookSchema = z.object({
  url: url.meta({ description: "Where the call's details are POSTed at call start." }),
  secret: z.string().min(16, { error: "expected a secret of at least 16 characters" }).meta({
    secret: true,
    description: "HMAC-SHA256 key the request is signed with, as the call reports are.",
  }),
  timeoutMs: z.coerce.number().int().min(50).max(10_000).default(1500).meta({
    description: "Longest wait for the answer, ms; then the route's agent takes the call.",
  }),
});
export type WebhookConfig = z.output<typeof webhookSchema>;

const pattern = z.string().min(1);

export const routeSchema = z.object({
  transport: z
    .enum(TRANSPORTS, { error: `expected one of ${TRANSPORTS.join(", ")}` })
    .optional()
    .meta({ description: "The transport the call came by." }),
  to: pattern.optional().meta({
    description:
      "The called number (Twilio To, the SIP To user, the console's choice of agent); `*` matches any run of characters.",
  }),
  from: pattern.optional().meta({
    description: "The caller (Twilio From, the SIP From user); `*` matches any run of characters.",
  }),
  guild: z.string().min(1).optional().meta({ description: "Discord: the guild (server) id." }),
  channel: z.string().min(1).optional().meta({ description: "Discord: the voice channel id." }),
  agent: agentName.meta({
    description: "The agent that takes the route's calls: `default` or a name under agents.",
  }),
  agentWebhook: webhookSchema.optional().meta({
    description: "Asked at call start for this route's calls (instead of the global agentWebhook).",
  }),
});
export type Route = z.output<typeof routeSchema>;

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
