// Chat targets for the resilience tests: each request plays the next script on virtual time
// (text, a bare chunk, a tool call, an error, the end; a script that does not end stalls), and
// stops when its signal is aborted. What each request was sent is kept.
import type { ChatMessage } from "../../../src/api/types/index.ts";
import type { TimerHandle, VirtualClock } from "../../../src/core/clock.ts";
import { silentLogger } from "../../../src/core/log.ts";
import type { ChatRoute, ChatSource, SourceEvent } from "../../../src/session/resilience/chat-attempt.ts";
import type { CircuitState } from "../../../src/session/resilience/circuit-breaker.ts";
import type { FailureKind } from "../../../src/session/resilience/failure.ts";
import {
  type HealthSink,
  ServiceHealth,
  type ServiceKind,
} from "../../../src/session/resilience/service-health.ts";
import type { ChatEvent } from "../../../src/session/services.ts";
import { Channel } from "../harness.ts";

/** One step of a request's answer, `after` ms after the step before (or the request). */
export type Step =
  | { after: number; text: string }
  | { after: number; chunk: true }
  | { after: number; call: { id: string; name: string; arguments: string } }
  | { after: number; error: Error }
  | { after: number; end: true };

export interface SentRequest {
  messages: readonly ChatMessage[];
  at: number;
  signal: AbortSignal;
}

export class ScriptedSource implements ChatSource {
  readonly requests: SentRequest[] = [];
  readonly #clock: VirtualClock;
  readonly #scripts: Step[][];

  constructor(clock: VirtualClock, scripts: Step[][]) {
    this.#clock = clock;
    this.#scripts = scripts;
  }

  stream(messages: readonly ChatMessage[], _tools: unknown, signal: AbortSignal): AsyncIterable<SourceEvent> {
    const steps = this.#scripts.shift();
    if (!steps) throw new Error("no script left for this request");
    this.requests.push({ messages, at: this.#clock.now(), signal });
    const out = new Channel<SourceEvent>();
    const timers: TimerHandle[] = [];
    let at = 0;
    for (const step of steps) {
      at += step.after;
      timers.push(
        this.#clock.setTimeout(() => {
          if ("error" in step) out.close(step.error);
          else if ("end" in step) out.close();
          else if ("text" in step) out.push({ type: "text", text: step.text });
          else if ("chunk" in step) out.push({ type: "chunk" });
          else out.push({ type: "tool-call", call: step.call });
        }, at),
      );
    }
    signal.addEventListener("abort", () => {
      for (const t of timers) this.#clock.clearTimeout(t);
      out.close(new Error("aborted"));
    });
    return out;
  }
}

/** A reply's words as steps: one piece every `everyMs`, then the end. */
export function says(pieces: string[], everyMs = 50): Step[] {
  return [...pieces.map((text) => ({ after: everyMs, text })), { after: everyMs, end: true as const }];
}

/** What the health told the metrics. */
export class RecordingSink implements HealthSink {
  readonly failures: { endpoint: ServiceKind; kind: FailureKind }[] = [];
  hedges = 0;
  readonly fallbacks: ServiceKind[] = [];
  readonly circuits: { target: string; state: CircuitState }[] = [];
  failure(endpoint: ServiceKind, kind: FailureKind): void {
    this.failures.push({ endpoint, kind });
  }
  hedge(): void {
    this.hedges++;
  }
  fallback(endpoint: ServiceKind): void {
    this.fallbacks.push(endpoint);
  }
  circuit(_endpoint: ServiceKind, target: string, state: CircuitState): void {
    this.circuits.push({ target, state });
  }
}

export function healthOn(
  clock: VirtualClock,
  sink = new RecordingSink(),
): { health: ServiceHealth; sink: RecordingSink } {
  return { health: new ServiceHealth({ clock, log: silentLogger, sink }), sink };
}

export const CIRCUIT = { failures: 5, windowMs: 30_000, openMs: 20_000 };

export function route(
  health: ServiceHealth,
  source: ChatSource,
  model: string,
  isFallback = false,
): ChatRoute {
  return {
    source,
    health: health.target({ endpoint: "chat", baseUrl: "http://svc", model }, CIRCUIT),
    isFallback,
  };
}

/** Moves virtual time on by `ms` in small steps, letting every promise settle after each. */
export async function advance(clock: VirtualClock, ms: number, stepMs = 5): Promise<void> {
  for (let done = 0; done < ms; done += stepMs) {
    clock.advance(Math.min(stepMs, ms - done));
    await new Promise((r) => setImmediate(r));
  }
}

/** Reads a reply as it comes, while the test moves time on. */
export class Reader {
  readonly events: ChatEvent[] = [];
  error: unknown;
  done = false;
  constructor(stream: AsyncIterable<ChatEvent>) {
    void (async () => {
      try {
        for await (const ev of stream) this.events.push(ev);
      } catch (err) {
        this.error = err;
      }
      this.done = true;
    })();
  }
  get text(): string {
    return this.events.flatMap((e) => (e.type === "text" ? [e.text] : [])).join("");
  }
  get calls(): string[] {
    return this.events.flatMap((e) => (e.type === "tool-call" ? [e.call.name] : []));
  }
}
