// The `log` section: how much the bridge logs, and in which form.
import { z } from "zod";

export const logSchema = z
  .object({
    level: z
      .enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"])
      .default("info")
      .meta({ env: "LOG_LEVEL", description: "Lowest level of log lines written (pino levels)." }),
    format: z.enum(["auto", "pretty", "json"]).default("auto").meta({
      env: "LOG_FORMAT",
      description:
        "`pretty` lines for a person, `json` lines for a collector; `auto`: pretty in a terminal, JSON otherwise.",
    }),
  })
  .prefault({})
  .meta({ description: "Logging." });
