// The console's live feed: it hears the records and each call's activity on this bridge, and, on
// a shared database, the live calls of every other bridge on it.
import { type Config, consoleEnabled } from "../../src/config/config.ts";
import type { Logger } from "../../src/core/log.ts";
import type { CallStore } from "../../src/records/store/call-store.ts";
import { LiveFeed } from "../console/live-feed.ts";
import type { Records } from "./records.ts";

/** The feed, when the console is on. */
export async function consoleFeed(
  config: Config,
  { store, transcripts, instance }: Records,
  log: Logger,
): Promise<LiveFeed | undefined> {
  if (!consoleEnabled(config)) return undefined;
  const feed = new LiveFeed(transcripts, instance);
  if (store.watchOthers) {
    // Every bridge on the database shows every live call: those already running, then as they go.
    store.watchOthers((e) => feed.elsewhere(e.instance, e.callId, e.event));
    await seedOtherBridgesCalls(store, feed, instance).catch((err: Error) =>
      log.warn({ err }, "console: could not read the other bridges' live calls"),
    );
  }
  return feed;
}

/** The live calls of the other bridges on the store, as they are now, for the console. */
async function seedOtherBridgesCalls(store: CallStore, feed: LiveFeed, instance: string): Promise<void> {
  const { calls } = await store.list({ outcome: "live", limit: 100 });
  for (const call of calls.filter((c) => c.instance !== instance)) {
    const record = await store.get(call.callId);
    if (record) feed.seedElsewhere(call.instance, call.callId, record.events);
  }
}
