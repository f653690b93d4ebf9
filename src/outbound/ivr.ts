// A phone menu answered the agent's outbound call: answering-machine detection heard a machine
// whose greeting ended in silence rather than a beep, and the agent has an `ivr` goal. The agent
// then works the menu like a person: it says nothing first, listens to the options, and presses
// keys with send_dtmf (session/dtmf-out.ts) toward its goal; when a person comes on, it talks.
import type { CallAgent } from "../agents/call-agent.ts";

/** What the model is told on top of its own prompt once a menu has answered. */
export function ivrPrompt(goal: string): string {
  return [
    "An automated phone menu answered this call, not a person.",
    `Your goal in it: ${goal}.`,
    "The menu's words come to you as the caller's turns (recognized speech, often garbled): pick the option that leads toward the goal and press its key with the send_dtmf tool, without saying anything.",
    "When it asks for a number you know (an account, a date), press those keys the same way, ending with # if it says so.",
    "If no option fits, press 0 or the key it names for an operator; if you have not heard the options yet, answer with an empty reply and wait: menus repeat them.",
    "Once a person answers, speak to them normally to reach your goal.",
  ].join(" ");
}

/**
 * The agent as it takes a call a menu answered: its prompt with the menu's instructions, no
 * greeting (the agent listens first). Undefined when the agent has no `ivr` goal.
 */
export function ivrAgent(agent: CallAgent): CallAgent | undefined {
  const goal = agent.session.ivr?.goal;
  if (!goal) return undefined;
  const { greeting: _greeting, ...session } = agent.session;
  return {
    ...agent,
    session: { ...session, systemPrompt: `${session.systemPrompt}\n\n${ivrPrompt(goal)}`, listenFirst: true },
  };
}
