// The speech engines of one local service, shared by E4, E5 and E6: loaded once, on the first speech
// request (or by warmSpeechEngines at start-up), then kept; closed with the server. Lazy so that a
// service started for chat or files alone never spawns TTS workers or loads the ASR model.
import type { ServiceContext } from "../context.ts";
import { type AsrEngine, SphinxEngine } from "../engines/asr/sphinx-engine.ts";
import { UpstreamAsr } from "../engines/asr/upstream.ts";
import { SPEECH_PATH, TRANSCRIPTIONS_PATH } from "../engines/openai-audio.ts";
import { SyntheticAsr } from "../engines/synthetic/asr.ts";
import { SyntheticTts } from "../engines/synthetic/tts.ts";
import type { TtsEngine } from "../engines/tts/engine.ts";
import { EspeakPool } from "../engines/tts/espeak-pool.ts";
import { UpstreamTts, type UpstreamTtsOptions } from "../engines/tts/upstream.ts";
import type { ClonedVoiceResolver } from "../engines/tts/voices.ts";
import { type UpstreamOptions, v1Url } from "../engines/upstream.ts";

export interface SpeechEngines {
  tts: TtsEngine;
  asr: AsrEngine;
  /** Cloned voices (E10 store), when one has been attached. */
  clonedVoices?: ClonedVoiceResolver;
}

interface Entry {
  engines: Promise<SpeechEngines> | undefined;
  users: number;
  closed: boolean;
}

const byContext = new WeakMap<ServiceContext, Entry>();
const resolvers = new WeakMap<ServiceContext, ClonedVoiceResolver>();
const synthetic = new WeakSet<ServiceContext>();
const upstreams = new WeakMap<ServiceContext, SpeechUpstreams>();

/** Upstream servers that serve recognition (E6) and synthesis (E4, E5) instead of the embedded engines. */
export interface SpeechUpstreams {
  asr?: UpstreamOptions | undefined;
  tts?: UpstreamTtsOptions | undefined;
}

export function useSpeechUpstreams(ctx: ServiceContext, u: SpeechUpstreams): void {
  upstreams.set(ctx, u);
}

/** Which engine serves what, in words (start-up log, `voice-bridge config`). */
export function describeSpeechEngines(u: SpeechUpstreams): { tts: string; asr: string } {
  return {
    tts: u.tts ? `upstream ${v1Url(u.tts.baseUrl, SPEECH_PATH)}` : "embedded espeak-ng",
    asr: u.asr ? `upstream ${v1Url(u.asr.baseUrl, TRANSCRIPTIONS_PATH)}` : "embedded PocketSphinx (en-us)",
  };
}

/** Benchmark-only engine profile: tones and a fixed transcript instead of espeak-ng and PocketSphinx. */
export function useSyntheticSpeechEngines(ctx: ServiceContext): void {
  synthetic.add(ctx);
}

/** Lets the voice store tell the speech routes what a cloned voice sounds like. */
export function attachClonedVoices(ctx: ServiceContext, resolver: ClonedVoiceResolver): void {
  resolvers.set(ctx, resolver);
}

export function clonedVoicesOf(ctx: ServiceContext): ClonedVoiceResolver | undefined {
  return resolvers.get(ctx);
}

async function create(ctx: ServiceContext): Promise<SpeechEngines> {
  if (synthetic.has(ctx)) return { tts: new SyntheticTts(), asr: new SyntheticAsr() };
  const up = upstreams.get(ctx) ?? {};
  // An upstream is never substituted by the embedded engine: its failures are the requests' errors.
  const tts = up.tts ? new UpstreamTts(up.tts) : new EspeakPool();
  const asr = up.asr ? new UpstreamAsr(up.asr) : new SphinxEngine();
  await Promise.all([
    tts instanceof EspeakPool ? tts.start() : undefined,
    asr instanceof SphinxEngine ? asr.start() : undefined,
  ]);
  ctx.log.debug({ ttsRate: tts.sampleRate, ...describeSpeechEngines(up) }, "speech engines ready");
  return { tts, asr };
}

function entryOf(ctx: ServiceContext): Entry {
  let entry = byContext.get(ctx);
  if (!entry) {
    entry = { engines: undefined, users: 0, closed: false };
    byContext.set(ctx, entry);
  }
  return entry;
}

function load(ctx: ServiceContext, entry: Entry): Promise<SpeechEngines> {
  if (entry.closed) return Promise.reject(new Error("speech engines closed"));
  if (!entry.engines) {
    entry.engines = create(ctx);
    entry.engines.catch((err) => {
      ctx.log.error({ err }, "speech engines failed to start");
      entry.engines = undefined; // a later request tries again
    });
  }
  return entry.engines;
}

/** Loads the engines now (e.g. at start-up) so that no request waits for the model load. */
export function warmSpeechEngines(ctx: ServiceContext): Promise<SpeechEngines> {
  return load(ctx, entryOf(ctx));
}

export interface SpeechEnginesHandle {
  /** The engines, loaded on first call. */
  get(): Promise<SpeechEngines>;
  /** Call when the route's server closes; the last release closes the engines. */
  release(): Promise<void>;
}

/** Engines for a route module. */
export function acquireSpeechEngines(ctx: ServiceContext): SpeechEnginesHandle {
  const entry = entryOf(ctx);
  entry.users++;
  let released = false;
  return {
    get: () => load(ctx, entry),
    release: async () => {
      if (released) return;
      released = true;
      if (--entry.users > 0) return;
      entry.closed = true;
      byContext.delete(ctx);
      const engines = await entry.engines?.catch(() => undefined);
      await Promise.all([engines?.tts.close(), engines?.asr.close()]);
    },
  };
}
