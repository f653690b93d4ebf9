// How the bridge's own parts meet the call store: GET /calls reads a live call from memory (the
// store may be a write behind) and the rest from the store; the console shows the live calls of
// the other bridges on the same database, those running when it starts and then as they go.
import type { CallReader } from "./call-routes.ts";
import type { LiveFeed } from "./console/live-feed.ts";
import type { Logger } from "./log.ts";
import type { CallRecorder } from "./session/call-recording.ts";
import type { TranscriptStore } from "./session/transcript.ts";
import type { CallStore } from "./store/call-store.ts";

export function callReader(
  transcripts: TranscriptStore,
  store: CallStore,
  instance: string,
  recorder: CallRecorder | undefined,
): CallReader {
  return {
    async get(callId) {
      const here = transcripts.get(callId);
      return here ? { ...here, instance } : store.get(callId);
    },
    list: (query) => store.list(query),
    async recordingOf(callId) {
      const stored = await store.get(callId).catch(() => undefined);
      return stored?.recording?.path ?? recorder?.pathOf(callId);
    },
    recording: recorder !== undefined,
  };
}

/** Feeds the console the other bridges' live calls (engines shared by several bridges). */
export async function watchOtherBridges(
  store: CallStore,
  feed: LiveFeed,
  instance: string,
  log: Logger,
): Promise<void> {
  if (!store.watchOthers) return;
  store.watchOthers((e) => feed.elsewhere(e.instance, e.callId, e.event));
  try {
    const { calls } = await store.list({ outcome: "live", limit: 100 });
    for (const call of calls.filter((c) => c.instance !== instance)) {
      const record = await store.get(call.callId);
      if (record) feed.seedElsewhere(call.instance, call.callId, record.events);
    }
  } catch (err) {
    log.warn({ err }, "console: could not read the other bridges' live calls");
  }
}
