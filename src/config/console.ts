// The `console` section: whether the bridge serves the live console and browser calls.
import { z } from "zod";

export const consoleSchema = z
  .object({
    enabled: z.boolean({ error: "expected true or false" }).optional().meta({
      env: "CONSOLE_ENABLED",
      description:
        "The live console at / and browser calls (WS /browser/call). Unset: on with the embedded local service (the offline demo), off with a hosted service.",
    }),
  })
  .prefault({})
  .meta({ description: "The live console and browser calls." });
