// What shapes one call's behaviour. Defaults follow human turn-taking and what the
// leading frameworks learned (see FIELD-NOTES): short waits after turns that sound complete,
// long ones after words that go on, and backchannels that never kill a turn.

import type { HandoffHistory } from "../records/call-record.ts";
import type { CodeTool } from "./code-tools.ts";
import { DEFAULT_HISTORY_BUDGET, type HistoryBudget } from "./history.ts";
import type { HttpToolConfig } from "./tools.ts";
import type { WaitingCueConfig } from "./waiting-cue.ts";
import type { WarmTransferConfig } from "./warm-transfer.ts";

export interface TurnTakingConfig {
  /** The shortest silence before a turn is confirmed, however complete it sounds, ms. */
  minEndOfTurnMs: number;
  /** Silence after which the turn is confirmed whatever it sounds like, ms. */
  maxEndOfTurnMs: number;
  /**
   * How sure the agent must be that the caller's turn is over before it speaks, in (0, 1): the
   * wait in between min and max is the silence after which the odds reach it (see end-of-turn.ts).
   * Higher talks over fewer pauses and answers later.
   */
  endOfTurnConfidence: number;
  /** The trigram model (sphinxbase binary) asked how likely the words end a sentence; undefined: none. */
  endOfTurnLm: string | undefined;
  /** How much the words count: log-odds per decade of P(</s>); 0 ignores them (see end-of-turn.ts). */
  endOfTurnLmWeight: number;
  /** Weigh how the voice ended (pitch, level) as well as the words. */
  endOfTurnProsody: boolean;
  /** Learn each caller's pauses within the call and lengthen or shorten their wait (bounded). */
  adaptToCaller: boolean;
  /**
   * Take only speech at the caller's own level for theirs (caller-voice.ts): a voice or noise in
   * the room well below it neither starts nor holds their turn, nor stops the agent.
   */
  callerLevelGate: boolean;
  /**
   * Suppress the caller's steady noise (WebRTC's suppressor, native/webrtc) before the detector
   * and the recognizer; the recording keeps what was sent. Needs the native piece built.
   */
  noiseSuppression: boolean;
  /** Caller speech over the agent longer than this pauses the agent, ms. */
  bargeInMinMs: number;
  /**
   * ...and longer than this interrupts it for good (shorter is a backchannel: resume), ms. The VAD
   * reports the end of speech 250–300 ms after the sound stops (Silero's probability falls 100–150
   * ms late, then 160 ms of silence), so this must exceed the longest backchannel ("mm-hmm" ~650
   * ms) by that much: at 900 ms a 670 ms "mm hmm" still interrupted. The agent is silent (paused)
   * from bargeInMinMs on either way, so a longer wait costs the caller nothing audible.
   */
  bargeInConfirmMs: number;
  /**
   * Speech over the agent that stops and goes on within this long is one barge-in (the VAD ends
   * speech at a comma's pause), ms. It covers a gap of up to ~400 ms: the end is reported ~200 ms
   * after the sound stops and the start ~150 ms after it goes on. After a backchannel, the agent
   * resumes this much later. Over a loud room, which reports the end later, it counts from when a
   * quiet room would have (barge-ins.ts, QUIET_END_CALLED_MS).
   */
  bargeInGapMs: number;
  /**
   * If the caller speaks again within this long after the agent began answering, the answer
   * was premature: it is dropped and the caller's words are taken as one utterance, ms.
   */
  resumeGraceMs: number;
  /** Audio kept from before the VAD's speech start, ms. */
  prerollMs: number;
}

/**
 * How long the call waits on each step of the service before treating it as failed (#54): a
 * person is on the line, so a stalled request is given up on and retried, hedged or replaced by
 * a fallback rather than waited for. All ms.
 */
export interface ServiceDeadlines {
  /** E1's first chunk after the request: past it a second (hedged) request starts. */
  chatFirstMs: number;
  /** The longest gap between E1's chunks once it streams: past it the stream has stalled. */
  chatGapMs: number;
  /** From the first chat request to the first words, retries, hedges and fallbacks included: past it, the apology. */
  chatTotalMs: number;
  /** E6's transcript after the end of the caller's utterance: past it the recognition is retried. */
  asrMs: number;
  /** E5's first audio after text was sent (a session opened or reopened): past it the session is replaced. */
  ttsFirstAudioMs: number;
}

export const DEFAULT_SERVICE_DEADLINES: ServiceDeadlines = {
  chatFirstMs: 1500,
  chatGapMs: 1500,
  chatTotalMs: 3000,
  asrMs: 2000,
  ttsFirstAudioMs: 1500,
};

/**
 * The embedded local service's: its engines share the bridge's CPU, so a late transcript or first
 * audio there is a busy machine, not a lost request, and asking again would only add work.
 */
export const EMBEDDED_SERVICE_DEADLINES: ServiceDeadlines = {
  ...DEFAULT_SERVICE_DEADLINES,
  asrMs: 15_000,
  ttsFirstAudioMs: 10_000,
};

export interface SessionConfig {
  /** The agent's name, for the call's record (several agents may serve one bridge). */
  agentName?: string;
  systemPrompt: string;
  /** Spoken at call start; when absent the model greets (asked with an empty conversation). */
  greeting?: string;
  turn: TurnTakingConfig;
  /** Silence from the caller after the agent finished before a re-prompt, ms. */
  repromptAfterMs: number;
  repromptText: string;
  /** Re-prompts without an answer before the agent says goodbye and hangs up. */
  maxReprompts: number;
  goodbyeText: string;
  apologyText: string;
  /**
   * Said when no words were made out in the caller's own voice (a noisy line), asking them to say
   * it again (apology.ts). Their voice is told by its level and pitch, so only with turn.callerLevelGate.
   */
  askAgainText: string;
  /** How long each service step is waited for (see ServiceDeadlines). */
  deadlines: ServiceDeadlines;
  /** Said when the answer is late (off when absent): see waiting-cue.ts. */
  waitingCue?: WaitingCueConfig;
  maxCallMs: number;
  /** Digits are sent to the model after this pause, or at once on '#'. */
  dtmfGapMs: number;
  transferTarget?: string;
  /** blind: transfer_call hands the call over at once; warm: the model may hold the caller and brief a person first (the default then). */
  transferMode?: "blind" | "warm";
  /** How a warm transfer holds the caller, briefs the person and waits (warm-transfer.ts). */
  warmTransfer?: WarmTransferConfig;
  httpTools: HttpToolConfig[];
  /** What of the conversation goes to the model: recent turns by tokens, a digest of older ones. */
  history: HistoryBudget;
  /** Agents this one may hand the call to (the handoff tool), and what the next gets of the conversation. */
  handoffs?: { agents: readonly string[]; history: HandoffHistory };
  /** Said when a call is handed to this agent; default: the greeting, else the model speaks first. */
  handoffLine?: string;
  /** Tools run in-process (the TypeScript API's, and MCP servers' tools), beside the HTTP tools. */
  codeTools?: readonly CodeTool[];
  /** The call's variables (webhook or onCallStart), which code tools read. */
  variables?: Readonly<Record<string, string>>;
  /**
   * The agent's goal in a phone menu (its `ivr` option, variables filled): read by the outbound
   * side, which starts the session in menu mode (outbound/ivr.ts) when a machine answers without a beep.
   */
  ivr?: { goal: string };
  /** The far side speaks first (a phone menu): the agent says nothing until it has heard it. */
  listenFirst?: boolean;
  /**
   * A conversation with several people (a voice channel): each turn is labelled with its
   * speaker's name, nobody is re-prompted, and in `mention` mode the agent answers only turns
   * that call it by `agentName` (every turn still goes into the history).
   */
  multiParty?: { respondTo: "all" | "mention"; agentName: string };
}

/** PocketSphinx's English trigram model, where Debian's pocketsphinx-en-us installs it. */
export const DEFAULT_END_OF_TURN_LM = "/usr/share/pocketsphinx/model/en-us/en-us.lm.bin";

export const DEFAULT_SESSION_CONFIG: SessionConfig = {
  systemPrompt:
    "You are a friendly phone agent. Answer in one or two short spoken sentences, no lists or markdown.",
  turn: {
    minEndOfTurnMs: 250,
    maxEndOfTurnMs: 1200,
    endOfTurnConfidence: 0.9,
    endOfTurnLm: DEFAULT_END_OF_TURN_LM,
    endOfTurnLmWeight: 1.3,
    endOfTurnProsody: false,
    adaptToCaller: true,
    callerLevelGate: true,
    noiseSuppression: false,
    bargeInMinMs: 180,
    bargeInConfirmMs: 1000,
    bargeInGapMs: 300,
    resumeGraceMs: 600,
    prerollMs: 300,
  },
  repromptAfterMs: 8000,
  repromptText: "Are you still there?",
  maxReprompts: 2,
  goodbyeText: "I'll hang up now. Goodbye!",
  apologyText: "Sorry, I'm having trouble on my side. Could you say that again?",
  askAgainText: "Sorry, I didn't catch that. Could you say it again?",
  deadlines: DEFAULT_SERVICE_DEADLINES,
  maxCallMs: 15 * 60_000,
  dtmfGapMs: 1500,
  httpTools: [],
  history: DEFAULT_HISTORY_BUDGET,
};
