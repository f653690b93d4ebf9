// Handoff between agents (#56): the model's `handoff` tool (or a code tool's ctx.handoff) names
// another agent; once the reply that said so has been heard, the same call goes on with that agent:
// its prompt, voice and models (its own services), tools, turn-taking and re-prompts, with the
// conversation carried as the agent handing off says (whole, a digest, or nothing). The transport
// sees nothing of it. Only the app can build an agent's services, so the session asks it for the
// agent by name (AgentResolver); the call's time limit, recording and record stay the call's.
import type { Logger } from "../core/log.ts";
import type { CallEvent, CallEventSink } from "../records/call-record.ts";
import type { Apology } from "./apology.ts";
import { CachedSpeech } from "./cached-speech.ts";
import type { SessionConfig } from "./config.ts";
import type { ConversationHistory } from "./history.ts";
import type { Recognizer, SessionServices } from "./services.ts";
import { type ToolBox, toolBoxOf } from "./tools.ts";
import type { CallTransport } from "./transport.ts";
import { TtsPool } from "./tts-pool.ts";

/** An agent resolved for this call (its templates filled with the call's variables). */
export interface NextAgent {
  readonly config: SessionConfig;
  readonly services: SessionServices;
}

/** The agent named `name` for this call; undefined when there is none by that name. */
export type AgentResolver = (name: string) => NextAgent | undefined;

/** What of the session's dependencies a handoff replaces or uses. */
export interface HandoffDeps {
  transport: CallTransport;
  config: SessionConfig;
  services: SessionServices;
  transcripts: CallEventSink;
  handoff?: AgentResolver;
}

/** What of a session is its agent's, replaced when another takes the call over. */
export interface AgentParts<D extends HandoffDeps> {
  deps: D;
  history: ConversationHistory;
  tools: ToolBox;
  tts: TtsPool;
}

/**
 * The session's parts for agent `to`, or why it cannot take the call (said to the model). The
 * handoff is recorded; from then on the record's turns name the agent that had them.
 */
export function handOver<D extends HandoffDeps>(
  parts: AgentParts<D>,
  to: string,
  reason: string,
  env: { log: Logger; apology: Apology<object> },
): AgentParts<D> | string {
  const { deps } = parts;
  const from = deps.config.agentName ?? "default";
  const next = deps.handoff?.(to);
  if (!next) {
    const why = `the handoff to ${to} failed: there is no such agent on this bridge`;
    deps.transcripts.append(deps.transport.info.callId, {
      type: "note",
      at: new Date().toISOString(),
      text: why,
    });
    return why;
  }
  const { transport } = deps;
  const carry = deps.config.handoffs?.history ?? "whole";
  const at = new Date().toISOString();
  const event: CallEvent = { type: "handoff", at, from, to, reason, history: carry };
  deps.transcripts.append(transport.info.callId, event);
  env.log.info({ from, to, reason, history: carry }, "call handed to another agent");
  const why = reason ? `: ${reason}` : "";
  const prompt = `${next.config.systemPrompt}\n\n(Agent "${from}" handed this call to you${why}.)`;
  const history = parts.history.handedOver(prompt, next.config.history, carry);
  parts.tts.close();
  const tts = new TtsPool(next.services.tts, transport.output, env.log);
  tts.warm();
  // The apology in the new voice, once it is ready (until then the old one is better than none).
  const apology = new CachedSpeech(next.config.apologyText, transport.output);
  void apology.prepare(next.services.tts, env.log).then(() => {
    if (apology.audio) env.apology.speech = apology;
  });
  const transcripts = new AgentSink(deps.transcripts, to);
  return {
    deps: { ...deps, config: next.config, services: next.services, transcripts },
    history,
    tools: toolBoxOf(next.config, transport, env.log),
    tts,
  };
}

/** The call's record, its turns marked with the agent that has the call now. */
class AgentSink implements CallEventSink {
  readonly #base: CallEventSink;
  readonly #agent: string;

  constructor(sink: CallEventSink, agent: string) {
    // A second handoff marks the call's own sink, not the first's mark.
    this.#base = sink instanceof AgentSink ? sink.#base : sink;
    this.#agent = agent;
  }

  append(callId: string, event: CallEvent): void {
    const turn = event.type === "user" || event.type === "assistant";
    this.#base.append(callId, turn ? { ...event, agent: this.#agent } : event);
  }
}

/** A recognizer that is always the current agent's (a listener keeps the one it was given). */
export function currentRecognizer(services: () => SessionServices): Recognizer {
  return {
    recognize: (pcm, rate, signal, hints) => services().asr.recognize(pcm, rate, signal, hints),
    open: (rate, signal, hints) => services().asr.open(rate, signal, hints),
  };
}
