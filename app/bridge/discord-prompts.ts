// How a conversation in a Discord voice channel differs from a phone call: several people talk,
// each turn is labelled with its speaker, and it lasts as long as people stay.
import type { CallAgent } from "../../src/agents/call-agent.ts";
import type { Config } from "../../src/config/config.ts";
import type { SessionConfig } from "../../src/session/config.ts";
import type { CallInfo } from "../../src/session/transport.ts";

/** What the model is told about a conversation with several people in it. */
const GROUP_NOTE =
  "Several people talk with you here: each user message starts with the speaker's name and a colon. " +
  "Answer the person who spoke last, and use names when it helps.";
const GROUP_PROMPT =
  "You are a friendly voice assistant in a voice channel. Answer in one or two short spoken sentences, no lists or markdown.";
/** A voice channel is not a call to time out: the conversation lasts as long as people stay. */
const GROUP_MAX_MS = 24 * 3600_000;

/**
 * The session configuration for one conversation: a phone call's as configured; a voice
 * channel's with its members told apart (labelled turns, `discord.respondTo`, the agent's name).
 */
export function conversationConfig(agent: CallAgent, config: Config, info: CallInfo): SessionConfig {
  const base = agent.session;
  if (info.transport !== "discord") return base;
  const prompt = agent.prompted ? base.systemPrompt : GROUP_PROMPT;
  return {
    ...base,
    systemPrompt: `${prompt} ${GROUP_NOTE}`,
    maxCallMs: GROUP_MAX_MS,
    multiParty: {
      respondTo: config.discord.respondTo,
      agentName: config.discord.agentName ?? info.params.agentName ?? "agent",
    },
  };
}
