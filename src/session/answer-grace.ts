// The grace after an answer is first heard (resumeGraceMs). A caller who speaks within it began
// before they could have taken the answer in: they are going on from their pause, the answer is
// dropped and their words merge (early-answer-pause.ts). Until it is over, their turn is not yet
// part of the conversation. It counts from the answer, not from the pause: a wait for the end of
// the turn near maxEndOfTurnMs (a loud room's onset mask, a slow first audio) otherwise left a
// caller who went on 1.2 s after their last word talking over an answer to half of what they
// said, and words shorter than an interruption takes to be sure were dropped.
import type { Clock, TimerHandle } from "../core/clock.ts";
import type { AgentTurn } from "./agent-turn.ts";
import type { TurnTakingConfig } from "./config.ts";
import type { SpeakerListener } from "./speaker-listener.ts";
import type { UserTurnJob } from "./user-turn.ts";

/**
 * The answer being heard (`agent`) that `l`'s sound at clock time `at` goes on over, if `agent`
 * answers `l`'s uncommitted turn `job` and was first heard under resumeGraceMs before. A sound
 * not yet speech (`onset`, onset-pause.ts) counts only within maxEndOfTurnMs of the pause's start,
 * where a caller goes on most often: most such sounds die away (a room's voice, a breath), each a
 * stutter in the answer; over the whole grace, a conversation at the next table paused answers
 * three times as often, for a caller heard 60 ms sooner.
 */
export function answerInGrace(
  job: UserTurnJob | undefined,
  agent: AgentTurn | undefined,
  l: SpeakerListener,
  at: number,
  t: TurnTakingConfig,
  sound: "speech" | "onset" = "speech",
): AgentTurn | undefined {
  if (!job || job.committed || job.listener !== l || !agent || agent !== job.turn) return;
  if (sound === "onset" && at - job.speechEndAt >= t.maxEndOfTurnMs) return;
  const end = graceEnd(agent, t.resumeGraceMs);
  return end !== undefined && at < end ? agent : undefined;
}

/** When the grace after `answer` was first heard ends, clock time (undefined: not heard yet). */
function graceEnd(answer: AgentTurn | undefined, graceMs: number): number | undefined {
  const heardAt = answer?.timings.firstPlayAt;
  return heardAt === undefined ? undefined : heardAt + graceMs;
}

/** Commits a user turn once the grace after its answer was first heard is over. */
export class GraceCommit {
  readonly #clock: Clock;
  readonly #graceMs: number;
  readonly #commit: (job: UserTurnJob) => void;
  #timer: TimerHandle | undefined;

  constructor(clock: Clock, graceMs: number, commit: (job: UserTurnJob) => void) {
    this.#clock = clock;
    this.#graceMs = graceMs;
    this.#commit = commit;
  }

  /** `job`'s answer was first heard, or what paused it was only a click: it commits at the grace's end. */
  arm(job: UserTurnJob): void {
    const end = graceEnd(job.turn, this.#graceMs);
    if (job.committed || end === undefined) return;
    this.hold();
    this.#timer = this.#clock.setTimeout(() => this.#commit(job), Math.max(0, end - this.#clock.now()));
  }

  /** Nothing commits until armed again: the caller may be going on, or the turn was dropped. */
  hold(): void {
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
