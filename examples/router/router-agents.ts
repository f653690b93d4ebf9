// The router's agents: the reception (the default agent) takes every call first, and its
// onCallStart looks at the number called and hands the call to that line's agent, or refuses a
// blocked caller, in-process, the way a call-start webhook would. router.ts runs them;
// router.test.yaml tests them (`npm test`).
import { defineAgent } from "voice-bridge";

/** Which agent answers which number (a real router might read this from a database). */
const LINES: Record<string, { agent: "sales" | "support"; line: string }> = {
  "+15552000001": { agent: "sales", line: "the sales line" },
  "+15552000002": { agent: "support", line: "the support desk" },
};
const BLOCKED = new Set(["+15550000666"]);

export const sales = defineAgent({
  greeting: "Hi, you've reached {{var.line}}. What can I offer you today?",
  voice: "en_male_adam",
});

export const support = defineAgent({
  greeting: "Hello, this is {{var.line}}. What seems to be the problem?",
  systemPrompt: "You are a patient support agent. Ask one question at a time.",
});

export const reception = defineAgent({
  greeting: "Hello, you've reached Acme. Which department would you like?",
  onCallStart: (call) => {
    if (call.from && BLOCKED.has(call.from)) return { reject: { reason: "blocked caller" } };
    const line = LINES[call.to ?? ""];
    return line ? { agent: line.agent, variables: { line: line.line } } : undefined;
  },
});
