// One bridge, several lines: onCallStart looks at the number called and hands the call to that
// line's agent (or refuses a blocked caller), in-process, the way a call-start webhook would.
//
//   npm install && npm start          then: npx voice-bridge call --to +15552000001
import { createBridge, defineAgent } from "voice-bridge";

/** Which agent answers which number (a real router might read this from a database). */
const LINES: Record<string, { agent: "sales" | "support"; line: string }> = {
  "+15552000001": { agent: "sales", line: "the sales line" },
  "+15552000002": { agent: "support", line: "the support desk" },
};
const BLOCKED = new Set(["+15550000666"]);

const sales = defineAgent({
  greeting: "Hi, you've reached {{var.line}}. What can I offer you today?",
  voice: "en_male_adam",
});
const support = defineAgent({
  greeting: "Hello, this is {{var.line}}. What seems to be the problem?",
  systemPrompt: "You are a patient support agent. Ask one question at a time.",
});

// The default agent takes every call first, and its onCallStart decides where it goes.
const reception = defineAgent({
  greeting: "Hello, you've reached Acme. Which department would you like?",
  onCallStart: (call) => {
    if (call.from && BLOCKED.has(call.from)) return { reject: { reason: "blocked caller" } };
    const line = LINES[call.to ?? ""];
    return line ? { agent: line.agent, variables: { line: line.line } } : undefined;
  },
});

const bridge = await createBridge({ agent: reception, agents: { sales, support } });
bridge.on("call-start", ({ callId, event }) =>
  console.log(`call ${callId} to ${event.to}: agent ${event.agent}`),
);
console.log(`router ready: ${bridge.url}`);
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => void bridge.drain(5000).then(() => process.exit(0)));
