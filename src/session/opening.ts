// What a caller says before the agent's greeting is heard is answered by the greeting. People say
// "Hello?" into the silence before it (a hosted service takes a second or more to greet), or as it
// begins; taken for a turn of its own, its answer cut the greeting short to say "Hello! How can I
// help you today?" once more, and a caller who had listened to the greeting and asked their
// question was talked over by that answer. So such words go into the conversation as they are,
// before the greeting, and nothing answers them but the greeting. Only short words: a request
// said whole before the greeting came is answered (it interrupts a greeting that comes while it
// goes on, interruptions.ts), and so is anything said once the greeting was heard, or if the
// greeting did not play to its end.
import type { AgentTurn } from "./agent-turn.ts";

/**
 * The longest words before the greeting that it answers, ms: "Hello?", "Hello? Hello?", "Hi, is
 * this the bike shop?" (0.5–1.4 s); a request takes longer to say.
 */
const OPENING_MAX_MS = 1500;

export class Opening {
  /** The agent's greeting (at the call's start, or a handoff's), from when it is started. */
  #greeting: AgentTurn | undefined;

  /** `turn` is the agent's greeting. */
  greets(turn: AgentTurn): void {
    this.#greeting = turn;
  }

  /**
   * Whether the greeting answers the caller's words said from clock time `startAt` to `endAt`: they
   * began before it was heard, are short, and it has not been cut short (it is on its way, playing,
   * or was heard to its end).
   */
  answers(startAt: number, endAt: number): boolean {
    const greeting = this.#greeting;
    if (!greeting || greeting.cutShort) return false;
    const heardAt = greeting.timings.firstPlayAt ?? Number.POSITIVE_INFINITY;
    return startAt < heardAt && endAt - startAt <= OPENING_MAX_MS;
  }
}
