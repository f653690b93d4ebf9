// The console's live feed (WS /console/live): the one definition of its messages, used by the
// bridge and the tests; the page (console/app.js) reads them.
//
// A page that connects first gets `hello` with every live call's record so far and what is
// forming in it, then one message per thing that happens: each event the call's record gets
// (the same CallEvent the record stores, so a live view and GET /calls/:id agree), and the
// activity that comes before a record event exists: the caller speaking, the words the
// recognizer heard, the agent thinking and its words as they are written, tool calls, keypad
// digits, and the agent's audio starting and being cut off.
import type { CallEvent } from "../../src/records/call-record.ts";

export const LIVE_PATH = "/console/live";

/** Something forming in a live call, not (yet) in its record. */
export type CallActivity =
  /** The VAD heard the caller start speaking (their words are streaming to recognition). */
  | { kind: "caller-speaking" }
  /** The caller stopped; recognition is finishing. */
  | { kind: "caller-recognizing" }
  /** What recognition heard. It becomes a caller turn once the agent answers it (or is dropped). */
  | { kind: "caller-heard"; text: string; asrMs: number }
  /** The utterance was dropped: a cough, a backchannel, or words merged into what followed. */
  | { kind: "caller-dropped" }
  /** A keypad digit. */
  | { kind: "dtmf"; digit: string }
  /** A chat request started: the agent is thinking. */
  | { kind: "agent-thinking" }
  /** The agent's words so far in one reply (`draft` numbers the replies of the call). */
  | { kind: "agent-text"; draft: number; text: string }
  /** The reply `draft` stopped forming: finished (its record event follows) or dropped unheard. */
  | { kind: "agent-text-end"; draft: number }
  /** The model called a tool. */
  | { kind: "agent-tool"; name: string; arguments: string }
  /**
   * The agent's audio: `playing` (audio went out after silence), `cleared` (the bridge dropped
   * what the caller had not heard yet: a barge-in), `idle` (everything sent has been played).
   */
  | { kind: "agent-audio"; state: "playing" | "cleared" | "idle" };

/** A live call as a page first sees it. */
export interface LiveCall {
  callId: string;
  /** The bridge that has the call (several bridges on one database each show all live calls). */
  instance: string;
  /** The call's record events so far, in order (starting with call-start). */
  events: CallEvent[];
  /** What is forming now, oldest first (at most one caller state, one reply, one audio state). */
  forming: CallActivity[];
}

/** One event of a call's record, as it is written (also createBridge's `event`, `call-start`). */
export interface CallEventMessage {
  type: "event";
  callId: string;
  /** The bridge that has the call. */
  instance: string;
  event: CallEvent;
}

export type ConsoleMessage =
  | { type: "hello"; calls: LiveCall[] }
  | CallEventMessage
  | { type: "activity"; callId: string; activity: CallActivity };
