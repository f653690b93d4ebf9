// The speech engines of one local service: created by the first speech route that needs them,
// shared by E4, E5 and E6, closed with the server.
import type { ServiceContext } from "../context.ts";
import { SphinxEngine } from "../engines/asr/sphinx-engine.ts";
import { EspeakPool } from "../engines/tts/espeak-pool.ts";
import type { ClonedVoiceResolver } from "../engines/tts/voices.ts";

export interface SpeechEngines {
  tts: EspeakPool;
  asr: SphinxEngine;
  /** Cloned voices (E10 store), when one has been attached. */
  clonedVoices?: ClonedVoiceResolver;
}

interface Entry {
  engines: Promise<SpeechEngines>;
  users: number;
}

const byContext = new WeakMap<ServiceContext, Entry>();
const resolvers = new WeakMap<ServiceContext, ClonedVoiceResolver>();

/** Lets the voice store tell the speech routes what a cloned voice sounds like. */
export function attachClonedVoices(ctx: ServiceContext, resolver: ClonedVoiceResolver): void {
  resolvers.set(ctx, resolver);
}

export function clonedVoicesOf(ctx: ServiceContext): ClonedVoiceResolver | undefined {
  return resolvers.get(ctx);
}

async function create(ctx: ServiceContext): Promise<SpeechEngines> {
  const tts = new EspeakPool();
  const asr = new SphinxEngine({ workDir: `${ctx.dataDir}/asr` });
  await Promise.all([tts.start(), asr.start()]);
  ctx.log.debug({ ttsRate: tts.sampleRate }, "speech engines ready");
  return { tts, asr };
}

/** Engines for a route; call the returned release when the route's server closes. */
export function acquireSpeechEngines(ctx: ServiceContext): {
  engines: Promise<SpeechEngines>;
  release: () => Promise<void>;
} {
  let entry = byContext.get(ctx);
  if (!entry) {
    entry = { engines: create(ctx), users: 0 };
    entry.engines.catch((err) => ctx.log.error({ err }, "speech engines failed to start"));
    byContext.set(ctx, entry);
  }
  entry.users++;
  const e = entry;
  let released = false;
  return {
    engines: e.engines,
    release: async () => {
      if (released) return;
      released = true;
      if (--e.users > 0) return;
      byContext.delete(ctx);
      const engines = await e.engines.catch(() => undefined);
      await Promise.all([engines?.tts.close(), engines?.asr.close()]);
    },
  };
}
