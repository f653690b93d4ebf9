// The `campaigns` section: how the bridge works through call lists (docs/campaigns.md). The
// campaigns themselves (list, agent, hours, pace, retries) come over HTTP, the CLI or the
// TypeScript API and live in the store; these keys bound what one may ask and how bridges share them.
import { z } from "zod";
import { flag } from "./values.ts";

export const campaignsSchema = z
  .object({
    enabled: flag.default(true).meta({
      env: "CAMPAIGNS_ENABLED",
      description:
        "Serve /campaigns and work through running campaigns on this bridge; false: neither (another bridge can).",
    }),
    maxListBytes: z.coerce
      .number()
      .int()
      .min(1024)
      .max(1024 * 1024 * 1024)
      .default(20 * 1024 * 1024)
      .meta({
        env: "CAMPAIGNS_MAX_LIST_BYTES",
        description:
          "Largest list one request may upload (CSV or JSON), bytes; a larger one is refused with 413 before it is read whole.",
      }),
    maxRows: z.coerce.number().int().min(1).max(10_000_000).default(100_000).meta({
      env: "CAMPAIGNS_MAX_ROWS",
      description: "Most rows one campaign may hold; a list beyond it is refused whole.",
    }),
    leaseSeconds: z.coerce.number().min(1).max(3600).default(30).meta({
      env: "CAMPAIGNS_LEASE_SECONDS",
      description:
        "A row being dialled is held by its bridge this long, renewed while the bridge lives; a bridge that dies frees its rows after it, and another bridge retries them (outcome `lost`).",
    }),
    doNotCallFile: z.string().min(1).optional().meta({
      env: "CAMPAIGNS_DO_NOT_CALL_FILE",
      description:
        "A file of numbers, one a line (# comments), that the bridge never dials, for a campaign or POST /calls (403): checked at dial time, read again when it changes.",
    }),
  })
  .prefault({})
  .meta({ description: "Campaigns: call lists worked through at a pace, within calling hours, retried." });

export type CampaignsConfig = z.infer<typeof campaignsSchema>;
