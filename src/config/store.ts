// The `store` section: where call records are kept (SQLite, or PostgreSQL shared by several bridges).
import { z } from "zod";

export const storeSchema = z
  .object({
    databaseUrl: z
      .string()
      .regex(/^postgres(ql)?:\/\/\S+$/, {
        error: "expected a postgres://user:password@host:5432/database URL",
      })
      .optional()
      .meta({
        env: "DATABASE_URL",
        secret: true,
        type: "PostgreSQL URL",
        description:
          "PostgreSQL for call records (postgres://user:password@host:5432/database), shared by every bridge on it. Unset: SQLite in <local.dataDir>/voice-bridge.db.",
      }),
    instance: z.string().min(1).max(64).optional().meta({
      env: "BRIDGE_INSTANCE",
      description:
        "This bridge's name in the records and the console (several bridges on one database). Default: the host name.",
    }),
    lostAfterSeconds: z.coerce.number().min(1).max(3600).default(30).meta({
      env: "STORE_LOST_AFTER_SECONDS",
      description:
        "PostgreSQL: a bridge silent this long is lost (killed, its machine gone); the next bridge that notices ends its live calls with reason `instance lost`. Each bridge says it is alive six times in this period.",
    }),
    keepEnded: z.coerce.number().int().min(0).max(100_000).default(200).meta({
      description: "Ended calls kept in memory for the console and reports (the live ones always are).",
    }),
  })
  .prefault({})
  .meta({ description: "Where call records are kept (SQLite, or PostgreSQL shared by several bridges)." });
