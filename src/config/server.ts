// The `server` section: the bridge's own HTTP server (Twilio's webhooks, the console, probes,
// /metrics), where the outside reaches it, and the token its own pages ask for.
import { z } from "zod";
import { port, url } from "./values.ts";

export const serverSchema = z
  .object({
    host: z
      .string()
      .min(1)
      .default("0.0.0.0")
      .meta({ env: "HOST", description: "Address the bridge's HTTP server listens on." }),
    port: port.default(8080).meta({
      env: "PORT",
      description: "Port the bridge's HTTP server listens on (Twilio, console, probes, /metrics).",
    }),
    publicUrl: url.optional().meta({
      env: "PUBLIC_URL",
      description: "Public https URL of this bridge, as Twilio reaches it (for TwiML and signatures).",
    }),
    token: z
      .preprocess(
        (v) => (v === false ? "off" : v),
        z.union([
          z.literal("off"),
          z.string().min(16, { error: 'expected a token of at least 16 characters, or "off"' }),
        ]),
      )
      .optional()
      .meta({
        env: "BRIDGE_TOKEN",
        secret: true,
        description:
          "Bearer token people need for the bridge's own pages and records: the console, its live feed, browser calls, /calls and recordings (Twilio's routes have their signature; probes and /metrics stay open). Unset: a random token is made at first start and kept in <local.dataDir>/bridge-token (mode 600). `off`: no token asked, on purpose.",
      }),
  })
  .prefault({})
  .meta({
    description:
      "The bridge's HTTP server: where it listens, how the outside reaches it, who may use its pages.",
  });
