// Recognition and synthesis with a fallback (#54): a request goes to the agent's own target unless
// its circuit is open, or (recognition) its last request failed; one that fails to open or answer
// is sent to the fallback at once. Every outcome feeds the target's health, so its circuit and
// the operator's view follow what the calls meet.
import type { Clock } from "../../core/clock.ts";
import type {
  RecognitionHints,
  Recognizer,
  RecognizerStream,
  SpeechSynthesizer,
  TtsEvent,
  TtsStream,
} from "../services.ts";
import type { OutputFormat } from "../transport.ts";
import { failureKind, ServiceFailure } from "./failure.ts";
import { requestController } from "./request-signals.ts";
import type { TargetHealth } from "./service-health.ts";

export interface SpeechRoute<T> {
  readonly port: T;
  readonly health: TargetHealth;
}

interface Routes<T> {
  primary: SpeechRoute<T>;
  fallback?: SpeechRoute<T> | undefined;
  /** Told each time a request goes to the fallback (the bridge's counter). */
  onFallback?: () => void;
}

/** How a request ended: answered, failed, given up on past its deadline, or dropped unanswered. */
type Ending = "answered" | "failed" | "late" | "dropped";

/** Tells `route` how a request ended: dropped by the caller is neither success nor failure. */
function report<T>(route: SpeechRoute<T>, ending: Ending, err: unknown): void {
  if (ending === "answered") route.health.succeeded();
  else if (ending === "dropped") route.health.abandoned();
  else if (ending === "late") route.health.failed("timeout", err);
  else route.health.failed(failureKind(err), err);
}

/**
 * A recognition its caller gave up on at (nearly) its deadline was late, not dropped: the session
 * keeps a deadline of its own, of the same length, which may well fire first.
 */
const LATE_SHARE = 0.9;

export interface RecognizerOptions extends Routes<Recognizer> {
  clock: Clock;
  /** The transcript's deadline after the utterance's end (or a retry's request), ms. */
  asrMs: number;
}

export class ResilientRecognizer implements Recognizer {
  readonly #r: RecognizerOptions;
  /** The own target's last request failed: the next goes to the fallback first (a retry). */
  #primaryFailed = false;

  constructor(opts: RecognizerOptions) {
    this.#r = opts;
  }

  async recognize(
    pcm: Int16Array,
    sampleRate: number,
    signal: AbortSignal,
    hints?: RecognitionHints,
  ): Promise<string> {
    const { primary, fallback, clock } = this.#r;
    const order =
      fallback && (this.#primaryFailed || !primary.health.allow())
        ? [fallback, primary]
        : [primary, fallback];
    let last: unknown;
    for (const route of order) {
      if (!route || signal.aborted) break;
      if (route === fallback) this.#r.onFallback?.();
      const request = requestController(signal);
      const startedAt = clock.now();
      try {
        const text = await this.#inTime(route.port.recognize(pcm, sampleRate, request.signal, hints), () =>
          request.abort(),
        );
        this.#outcome(route, "answered");
        return text;
      } catch (err) {
        this.#outcome(route, signal.aborted ? this.#givenUp(startedAt) : "failed", err);
        last = err;
      } finally {
        request.abort();
      }
    }
    throw last ?? new Error("recognition aborted");
  }

  open(sampleRate: number, signal: AbortSignal, hints?: RecognitionHints): RecognizerStream {
    const { primary, fallback, clock } = this.#r;
    const route = fallback && !primary.health.allow() ? fallback : primary;
    if (route === fallback) this.#r.onFallback?.();
    const stream = route.port.open(sampleRate, signal, hints);
    let endedAt: number | undefined;
    let givenUp: Ending | undefined;
    return {
      write: (pcm) => stream.write(pcm),
      end: async () => {
        endedAt = clock.now();
        try {
          const text = await this.#inTime(stream.end(), () => stream.abort());
          this.#outcome(route, "answered");
          return text;
        } catch (err) {
          this.#outcome(route, givenUp ?? (signal.aborted ? this.#givenUp(endedAt) : "failed"), err);
          throw err;
        }
      },
      abort: () => {
        // Before its end (a cough, the caller went on) it is dropped; after, it may be late.
        givenUp = endedAt === undefined ? "dropped" : this.#givenUp(endedAt);
        stream.abort();
      },
    };
  }

  /** A request given up on by its caller `since` then: late when that was near its deadline. */
  #givenUp(since: number): Ending {
    return this.#r.clock.now() - since >= this.#r.asrMs * LATE_SHARE ? "late" : "dropped";
  }

  /** `answer`, or a timeout failure (and `stop()`) when it is not there within asrMs. */
  #inTime(answer: Promise<string>, stop: () => void): Promise<string> {
    const { clock, asrMs } = this.#r;
    return new Promise<string>((resolve, reject) => {
      const timer = clock.setTimeout(() => {
        reject(new ServiceFailure(`recognition: no transcript within ${asrMs} ms`, "timeout"));
        stop();
      }, asrMs);
      answer.then(
        (text) => {
          clock.clearTimeout(timer);
          resolve(text);
        },
        (err: unknown) => {
          clock.clearTimeout(timer);
          reject(err);
        },
      );
    });
  }

  #outcome(route: SpeechRoute<Recognizer>, ending: Ending, err?: unknown): void {
    report(route, ending, err);
    if (route === this.#r.primary && ending !== "dropped") this.#primaryFailed = ending !== "answered";
  }
}

export class ResilientSynthesizer implements SpeechSynthesizer {
  readonly #r: Routes<SpeechSynthesizer>;

  constructor(routes: Routes<SpeechSynthesizer>) {
    this.#r = routes;
  }

  async open(format: OutputFormat): Promise<TtsStream> {
    const { primary, fallback } = this.#r;
    const first = fallback && !primary.health.allow() ? fallback : primary;
    const order = first === primary ? [primary, fallback] : [first];
    let last: unknown;
    for (const route of order) {
      if (!route) break;
      if (route === fallback) this.#r.onFallback?.();
      try {
        return new WatchedTts(await route.port.open(format), route.health);
      } catch (err) {
        report(route, "failed", err);
        last = err;
      }
    }
    throw last;
  }
}

/** A session whose first audio counts as its target's success and whose breaking off as a failure. */
class WatchedTts implements TtsStream {
  readonly #inner: TtsStream;
  readonly #health: TargetHealth;
  #closedByUs = false;

  constructor(inner: TtsStream, health: TargetHealth) {
    this.#inner = inner;
    this.#health = health;
  }

  get closed(): boolean {
    return this.#inner.closed;
  }
  sendText(text: string): void {
    this.#inner.sendText(text);
  }
  flush(): void {
    this.#inner.flush();
  }
  close(): void {
    this.#closedByUs = true;
    this.#inner.close();
  }

  get events(): AsyncIterable<TtsEvent> {
    const inner = this.#inner.events;
    const health = this.#health;
    const byUs = () => this.#closedByUs;
    return {
      async *[Symbol.asyncIterator]() {
        let heard = false;
        try {
          for await (const ev of inner) {
            if (ev.type === "audio" && !heard) {
              heard = true;
              health.succeeded();
            }
            yield ev;
          }
        } catch (err) {
          if (!byUs()) health.failed(failureKind(err) === "other" ? "closed" : failureKind(err), err);
          throw err;
        }
      },
    };
  }
}
