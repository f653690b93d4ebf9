// A caller utterance on its way to becoming a user turn: where its words are (recognizing,
// recognized, failed), whether its end is confirmed, the reply prepared for it, and whether it
// has gone into the history. The session owns the rules; this is the state they act on.
import { addressesAgent } from "./addressing.ts";
import type { AgentTurn } from "./agent-turn.ts";
import type { SessionConfig } from "./config.ts";
import type { TurnEndWait } from "./end-of-turn.ts";
import type { Recognition } from "./recognition.ts";
import type { SpeakerListener } from "./speaker-listener.ts";

/** A caller utterance on its way to becoming a turn. */
export interface UserTurnJob {
  id: number;
  /** Whose words (undefined for keypad digits). */
  listener: SpeakerListener | undefined;
  speechEndAt: number;
  /** When the detector reported that end (the silence it needs comes after the speech). */
  detectedAt?: number;
  text?: string;
  /** When its words were sent for recognition (the upload's end), clock time. */
  askedAt?: number;
  asrMs?: number;
  /** When its transcript arrived. */
  recognizedAt?: number;
  failed?: string;
  confirmed: boolean;
  confirmedAt?: number;
  /** The wait before its turn is confirmed (speech turns, until confirmed or dropped). */
  wait?: TurnEndWait;
  /** The user turn is in the history and the record (once its reply is first heard, or done). */
  committed?: boolean;
  /** Someone else spoke before it was answered: it goes into the history unanswered. */
  yielded?: boolean;
  turn?: AgentTurn;
  /** Its transcript on the way; dropped with the job unless its words are still wanted. */
  recognition?: Recognition;
  /** Settles once its transcript is in (or given up), whatever became of the job. */
  recognizing?: Promise<void>;
  source: "speech" | "dtmf";
}

/** Keypad digits gathered into a caller turn, confirmed as it is made. */
export function digitsTurn(id: number, digits: string, at: number): UserTurnJob {
  const text = `(the caller pressed on the keypad: ${digits.split("").join(" ")})`;
  return { id, listener: undefined, speechEndAt: at, confirmed: true, source: "dtmf", text };
}

/**
 * The caller's words still waiting for their turn when keys are pressed: they go into the history
 * (marked yielded, so once recognized), unanswered, before the keys' turn. None when the pending
 * turn is keys too, already in the history, or failed.
 */
export function keptBeforeKeys(job: UserTurnJob | undefined): UserTurnJob | undefined {
  if (job?.source !== "speech" || job.committed || job.failed) return undefined;
  job.yielded = true;
  return job;
}

/** Whether the agent answers the turn (in `mention` mode, only turns that call it by name). */
export function answeredByAgent(job: UserTurnJob, multiParty: SessionConfig["multiParty"]): boolean {
  if (!multiParty || multiParty.respondTo === "all" || !job.listener?.speaker) return true;
  return addressesAgent(job.text ?? "", multiParty.agentName);
}

/** What the history keeps of a user turn: in a group, who said it. */
export function userContent(job: UserTurnJob): string {
  const speaker = job.listener?.speaker;
  return speaker ? `${speaker.name}: ${job.text}` : job.text!;
}
