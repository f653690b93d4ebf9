// The `routes` and `agentWebhook` keys: which agent takes a call (matched in src/agents/routes.ts)
// and the call-start webhook asked at call start (src/agents/webhook.ts).
import { z } from "zod";
import { agentName } from "./agent.ts";
import { url } from "./values.ts";

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
