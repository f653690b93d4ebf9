// Recognition and synthesis with a fallback: where each request goes, and what the targets'
// health hears.
import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../../src/core/clock.ts";
import { ServiceFailure } from "../../../src/session/resilience/failure.ts";
import {
  ResilientRecognizer,
  ResilientSynthesizer,
} from "../../../src/session/resilience/resilient-speech.ts";
import type { ServiceHealth } from "../../../src/session/resilience/service-health.ts";
import type { Recognizer, SpeechSynthesizer, TtsEvent, TtsStream } from "../../../src/session/services.ts";
import { Channel } from "../harness.ts";
import { advance, healthOn } from "./scripted-chat.ts";

const CIRCUIT = { failures: 2, windowMs: 30_000, openMs: 20_000 };
const busy = () => new ServiceFailure("HTTP 503", "status_503", { status: 503 });

/** A recognizer that answers `text`, fails, or never answers; it counts its requests. */
class ScriptedRecognizer implements Recognizer {
  calls = 0;
  readonly answer: () => Promise<string>;
  constructor(answer: () => Promise<string>) {
    this.answer = answer;
  }
  recognize(): Promise<string> {
    this.calls++;
    return this.answer();
  }
  open() {
    this.calls++;
    let stop: ((e: Error) => void) | undefined;
    return {
      write() {},
      end: () =>
        new Promise<string>((resolve, reject) => {
          stop = reject;
          this.answer().then(resolve, reject);
        }),
      abort: () => stop?.(new Error("aborted")),
    };
  }
}

function asrSetUp(own: ScriptedRecognizer, spare: ScriptedRecognizer) {
  const clock = new VirtualClock();
  const { health, sink } = healthOn(clock);
  const t = (h: ServiceHealth, model: string) =>
    h.target({ endpoint: "asr", baseUrl: "http://svc", model }, CIRCUIT);
  let fallbacks = 0;
  const asr = new ResilientRecognizer({
    primary: { port: own, health: t(health, "own") },
    fallback: { port: spare, health: t(health, "spare") },
    onFallback: () => fallbacks++,
    clock,
    asrMs: 2000,
  });
  return { clock, sink, asr, fallbacks: () => fallbacks };
}

describe("recognition", () => {
  it("sends a retry to the fallback after the agent's own target failed the streamed utterance", async () => {
    const own = new ScriptedRecognizer(() => Promise.reject(busy()));
    const spare = new ScriptedRecognizer(async () => "the spare heard it");
    const t = asrSetUp(own, spare);
    const signal = new AbortController().signal;
    await expect(t.asr.open(16000, signal).end()).rejects.toThrow("HTTP 503");
    expect(await t.asr.recognize(new Int16Array(160), 16000, signal)).toBe("the spare heard it");
    expect([own.calls, spare.calls, t.fallbacks()]).toEqual([1, 1, 1]);
    expect(t.sink.failures).toEqual([{ endpoint: "asr", kind: "status_503" }]);
  });

  it("tries the fallback at once when the own target fails a request", async () => {
    const own = new ScriptedRecognizer(() => Promise.reject(busy()));
    const spare = new ScriptedRecognizer(async () => "heard");
    const t = asrSetUp(own, spare);
    expect(await t.asr.recognize(new Int16Array(160), 16000, new AbortController().signal)).toBe("heard");
    expect([own.calls, spare.calls]).toEqual([1, 1]);
  });

  it("fails a transcript later than asrMs as a timeout, and opens the utterance on the fallback while the circuit is open", async () => {
    const own = new ScriptedRecognizer(() => new Promise<string>(() => {}));
    const spare = new ScriptedRecognizer(async () => "heard");
    const t = asrSetUp(own, spare);
    const signal = new AbortController().signal;
    for (let i = 0; i < 2; i++) {
      const end = t.asr.open(16000, signal).end();
      const failed = expect(end).rejects.toMatchObject({ kind: "timeout" });
      await advance(t.clock, 2000, 100);
      await failed;
    }
    expect(t.sink.circuits.map((c) => c.state)).toEqual(["open"]);
    expect(await t.asr.open(16000, signal).end()).toBe("heard");
    expect([own.calls, spare.calls]).toEqual([2, 1]);
  });

  it("counts an utterance given up on at its deadline by the session as late, and retries on the fallback", async () => {
    const own = new ScriptedRecognizer(() => new Promise<string>(() => {}));
    const spare = new ScriptedRecognizer(async () => "heard");
    const t = asrSetUp(own, spare);
    const signal = new AbortController().signal;
    const stream = t.asr.open(16000, signal);
    const end = stream.end();
    const failed = expect(end).rejects.toThrow();
    await advance(t.clock, 1990, 10);
    stream.abort(); // the session's own deadline, a moment before ours
    await failed;
    expect(t.sink.failures).toEqual([{ endpoint: "asr", kind: "timeout" }]);
    expect(await t.asr.recognize(new Int16Array(160), 16000, signal)).toBe("heard");
    expect([own.calls, spare.calls]).toEqual([1, 1]);
  });

  it("counts an utterance the caller dropped as neither success nor failure", async () => {
    let fail!: (e: Error) => void;
    const own = new ScriptedRecognizer(() => new Promise<string>((_, reject) => (fail = reject)));
    const t = asrSetUp(own, new ScriptedRecognizer(async () => ""));
    const stream = t.asr.open(16000, new AbortController().signal);
    const end = stream.end();
    stream.abort();
    fail(new Error("aborted"));
    await expect(end).rejects.toThrow("aborted");
    expect(t.sink.failures).toEqual([]);
  });
});

/** A TTS session whose events the test plays. */
class PlayedSession implements TtsStream {
  readonly out = new Channel<TtsEvent>();
  closed = false;
  sendText(): void {}
  flush(): void {}
  close(): void {
    this.closed = true;
    this.out.close();
  }
  get events(): AsyncIterable<TtsEvent> {
    return this.out;
  }
}

describe("synthesis", () => {
  function ttsSetUp(openOwn: () => Promise<TtsStream>) {
    const clock = new VirtualClock();
    const { health, sink } = healthOn(clock);
    const spareSessions: PlayedSession[] = [];
    const spare: SpeechSynthesizer = {
      open: async () => {
        const s = new PlayedSession();
        spareSessions.push(s);
        return s;
      },
    };
    const t = (model: string) => health.target({ endpoint: "tts", baseUrl: "http://svc", model }, CIRCUIT);
    const tts = new ResilientSynthesizer({
      primary: { port: { open: openOwn }, health: t("own") },
      fallback: { port: spare, health: t("spare") },
    });
    return { tts, sink, spareSessions };
  }

  it("opens the session on the fallback when the own target refuses", async () => {
    const t = ttsSetUp(() => Promise.reject(busy()));
    await t.tts.open({ kind: "pcm", rate: 8000 });
    expect(t.spareSessions).toHaveLength(1);
    expect(t.sink.failures).toEqual([{ endpoint: "tts", kind: "status_503" }]);
  });

  it("counts a session cut after its first audio as a failure of its target, and one we close as none", async () => {
    const session = new PlayedSession();
    const t = ttsSetUp(async () => session);
    const stream = await t.tts.open({ kind: "pcm", rate: 8000 });
    const seen: string[] = [];
    const read = (async () => {
      for await (const ev of stream.events) seen.push(ev.type);
    })();
    session.out.push({ type: "audio", audio: new Int16Array(80), durationMs: 10 });
    session.out.close(new ServiceFailure("tts: closed (code 1011)", "closed"));
    await expect(read).rejects.toThrow("1011");
    expect(seen).toEqual(["audio"]);
    expect(t.sink.failures).toEqual([{ endpoint: "tts", kind: "closed" }]);

    const mine = await t.tts.open({ kind: "pcm", rate: 8000 });
    mine.close();
    expect(t.sink.failures).toHaveLength(1);
  });
});
