// The `audiosocket` section: calls that Asterisk hands over a TCP stream (AudioSocket).
import { z } from "zod";
import { port } from "./values.ts";

export const audiosocketSchema = z
  .object({
    port: z
      .union([z.literal(false), z.literal("off").transform(() => false as const), port])
      .default(false)
      .meta({
        env: "AUDIOSOCKET_PORT",
        description: "Asterisk AudioSocket TCP port; unset or false (`off`) disables it.",
      }),
    host: z
      .string()
      .min(1)
      .default("0.0.0.0")
      .meta({ env: "AUDIOSOCKET_HOST", description: "Address the AudioSocket server listens on." }),
  })
  .prefault({})
  .meta({ description: "Asterisk AudioSocket: calls that Asterisk hands over a TCP stream." });
