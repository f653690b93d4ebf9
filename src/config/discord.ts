// The `discord` section: the bot that puts an agent in voice channels, and its shards.
import { z } from "zod";
import { url, wordList } from "./values.ts";

export const discordSchema = z
  .object({
    token: z.string().min(1).optional().meta({
      env: "DISCORD_TOKEN",
      secret: true,
      description: "Bot token; the Discord bot runs whenever it is set.",
    }),
    apiBase: url.default("https://discord.com/api").meta({
      env: "DISCORD_API_BASE",
      description: "Base URL of Discord's API (REST; the gateway URL comes from /gateway/bot).",
    }),
    autoJoin: wordList
      .pipe(
        z.array(z.string().regex(/^\d{15,21}$/, { error: "expected a channel id (a snowflake: digits)" })),
      )
      .default([])
      .meta({
        env: "DISCORD_AUTO_JOIN",
        description: "Voice channel ids joined at start (comma-separated in the environment).",
      }),
    respondTo: z.enum(["all", "mention"]).default("all").meta({
      env: "DISCORD_RESPOND_TO",
      description: "`all`: answer every turn; `mention`: only turns that address the agent by name.",
    }),
    agentName: z.string().min(1).optional().meta({
      env: "DISCORD_AGENT_NAME",
      description: "The name members call the agent by (mention mode); default: the bot's user name.",
    }),
    textLog: z.coerce.boolean().default(false).meta({
      env: "DISCORD_TEXT_LOG",
      description: "Post the conversation to the voice channel's text chat as it happens.",
    }),
    shards: z
      .union([z.literal("auto"), z.coerce.number().int().min(1).max(1000)])
      .optional()
      .meta({
        env: "DISCORD_SHARDS",
        description:
          "Shard processes: a number, or `auto` (Discord's recommendation); unset runs one process.",
      }),
  })
  .prefault({})
  .meta({ description: "The Discord bot: an agent in voice channels." });
