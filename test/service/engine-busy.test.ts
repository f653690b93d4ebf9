// The embedded engines refuse work they cannot start in time instead of queueing it without end
// (a starved or paused service): a bounded wait on virtual time, then the real PocketSphinx pool
// and the real espeak-ng workers refusing with 503 engine_busy.
import { afterEach, describe, expect, it, vi } from "vitest";
import { SphinxEngine } from "../../src/service/engines/asr/sphinx-engine.ts";
import { BoundedWaitQueue, EngineBusyError, engineRefusals } from "../../src/service/engines/busy.ts";
import { EspeakPool } from "../../src/service/engines/tts/espeak-pool.ts";
import { officialVoice } from "../../src/service/engines/tts/voices.ts";
import { toApiError } from "../../src/service/errors.ts";
import { until } from "../helpers/until.ts";

describe("BoundedWaitQueue", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("gives to the oldest waiter, refuses past the deadline and when full, and counts each refusal", async () => {
    vi.useFakeTimers();
    const q = new BoundedWaitQueue<string>("asr", { maxWaitMs: 1000, maxWaiting: 2 });
    const before = engineRefusals().asr;
    const first = q.wait();
    const second = q.wait();
    const third = q.wait();
    await expect(third).rejects.toBeInstanceOf(EngineBusyError);
    expect(q.give("a")).toBe(true);
    expect(await first).toBe("a");
    const late = expect(second).rejects.toThrow(/no room within 1000 ms/);
    await vi.advanceTimersByTimeAsync(999);
    expect(q.length).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    await late;
    expect(q.length).toBe(0);
    expect(q.give("b")).toBe(false);
    expect(engineRefusals().asr - before).toBe(2);
    // What the service answers with, before a stream has started.
    const api = toApiError(await third.catch((e: unknown) => e));
    expect(api.status).toBe(503);
    expect(api.toBody().error).toMatchObject({ type: "overloaded_error", code: "engine_busy" });
  });
});

describe("engines under a bound", () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const c of closers.splice(0)) await c();
  });

  it("PocketSphinx: an utterance that cannot get a decoder in time is refused, and the pool goes on", async () => {
    const e = new SphinxEngine({ decoders: 1, wait: { maxWaitMs: 300, maxWaiting: 1 } });
    await e.start();
    closers.push(() => e.close());
    const held = await e.acquire();
    const waiting = e.acquire();
    await expect(e.acquire()).rejects.toThrow(/1 jobs already waiting/);
    await expect(waiting).rejects.toBeInstanceOf(EngineBusyError);
    // A streamed utterance that cannot get a decoder fails with the same error when it ends.
    const refused = engineRefusals().asr;
    const stream = e.openStream();
    stream.push(new Int16Array(32000));
    await until(() => engineRefusals().asr > refused, "the stream's wait for a decoder to run out", 5_000);
    stream.push(new Int16Array(32000));
    await expect(stream.finish()).rejects.toBeInstanceOf(EngineBusyError);
    e.release(held);
    // The decoder is free again and recognition works as before.
    const words = await e.recognize(new Int16Array(16000));
    expect(Array.isArray(words)).toBe(true);
  });

  it("espeak-ng: past the sentences a worker may queue, the next one is refused; the queued ones are spoken", async () => {
    const pool = new EspeakPool({ size: 1, maxQueuedPerWorker: 2 });
    await pool.start();
    closers.push(() => pool.close());
    const voice = officialVoice("en_male_adam")!;
    const samples = [0, 0];
    const speak = (i: number) =>
      pool.synthesize({ text: "Thank you for calling.", voice, speed: 1 }, (pcm) => {
        samples[i] = (samples[i] ?? 0) + pcm.length;
      });
    const queued = [speak(0), speak(1)];
    await expect(speak(2)).rejects.toMatchObject({ status: 503, code: "engine_busy" });
    await Promise.all(queued);
    expect(samples.every((n) => n > pool.sampleRate * 0.5)).toBe(true);
    await speak(0);
  });
});
