// The calls benchmark's bridge with --api: built with createBridge and an agent defined in code
// (its turn-taking as the CLI bridge's config file sets it, and a TypeScript tool offered to the
// model), configured by the same environment as `voice-bridge start`, stopped the same way.
import { createBridge, defineAgent, tool, z } from "../../app/index.ts";

const eouMs = Number(process.env.BENCH_MIN_EOU_MS);
const agent = defineAgent({
  minEndOfTurnMs: eouMs,
  maxEndOfTurnMs: eouMs,
  tools: [
    tool({
      name: "lookup_order",
      description: "Looks up an order by its number",
      parameters: z.object({ order_id: z.string() }),
      execute: ({ order_id }, ctx) => ({ order_id, status: "shipped", caller: ctx.call.from ?? null }),
    }),
  ],
});
const bridge = await createBridge({ agent });
const stop = (drainMs: number) => () => void bridge.drain(drainMs).then(() => process.exit(0));
process.once("SIGTERM", stop(30_000));
process.once("SIGINT", stop(5_000));
