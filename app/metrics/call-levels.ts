// The callers' and rooms' levels on /metrics: per ended call, how loud the caller spoke, how loud
// the room behind them was, and how long the room's speech outlasted the caller's (what would have
// held their turns open), the utterances sent for recognition twice, and the callers asked to say it
// again (their voice heard, no words made out: a line or a room too loud for the recognizer). Taken
// from each call's events on their way to the record.
import { Counter, Histogram, type Registry } from "prom-client";
import type { CallEvent, CallEventSink, CallLevels } from "../../src/records/call-record.ts";
import { UNHEARD } from "../../src/session/apology.ts";

const LEVEL_BUCKETS_DBFS = [-70, -60, -50, -45, -40, -35, -30, -25, -20, -15, -10];
const HELD_BUCKETS_S = [0, 0.5, 1, 2, 5, 10, 30, 60, 120];

export class CallLevelMetrics {
  readonly #caller: Histogram;
  readonly #noise: Histogram;
  readonly #held: Histogram;
  readonly #resent: Counter;
  readonly #askedAgain: Counter;

  constructor(registry: Registry) {
    this.#caller = new Histogram({
      name: "voice_bridge_caller_speech_level_dbfs",
      help: "the caller's speech level over a call, dBFS (calls where the caller spoke)",
      buckets: LEVEL_BUCKETS_DBFS,
      registers: [registry],
    });
    this.#noise = new Histogram({
      name: "voice_bridge_call_noise_level_dbfs",
      help: "the room's median level behind the caller over a call, dBFS",
      buckets: LEVEL_BUCKETS_DBFS,
      registers: [registry],
    });
    this.#held = new Histogram({
      name: "voice_bridge_call_room_held_seconds",
      help: "time per call the voice detector went on hearing speech after the caller's own had ended (background voices the caller-level gate kept from holding turns open)",
      buckets: HELD_BUCKETS_S,
      registers: [registry],
    });
    this.#resent = new Counter({
      name: "voice_bridge_utterances_resent_total",
      help: "caller utterances sent for recognition again: the caller went on after a pause their upload had ended at (one more recognition request each)",
      registers: [registry],
    });
    this.#askedAgain = new Counter({
      name: "voice_bridge_callers_asked_again_total",
      help: "caller turns that held their voice but brought no words the recognizer made out, answered by asking them to say it again (agent.askAgainText)",
      registers: [registry],
    });
  }

  observe(levels: CallLevels): void {
    if (levels.callerDb !== undefined) this.#caller.observe(levels.callerDb);
    if (levels.noiseDb !== undefined) this.#noise.observe(levels.noiseDb);
    this.#held.observe(levels.roomHeldMs / 1000);
    if (levels.resentUtterances) this.#resent.inc(levels.resentUtterances);
  }

  /** `sink`, observing the levels of each call-end that passes through it. */
  tap(sink: CallEventSink): CallEventSink {
    return {
      append: (callId: string, event: CallEvent) => {
        if (event.type === "call-end" && event.levels) this.observe(event.levels);
        if (event.type === "assistant" && event.error === UNHEARD) this.#askedAgain.inc();
        sink.append(callId, event);
      },
    };
  }
}
