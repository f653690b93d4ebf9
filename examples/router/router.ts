// One bridge, several lines: the reception agent hands each call to its line's agent
// (router-agents.ts).
//
//   npm install && npm start          then: npx voice-bridge call --to +15552000001
//   npm test                          the agents' scenarios (router.test.yaml) on simulated calls
import { createBridge } from "voice-bridge";
import { reception, sales, support } from "./router-agents.ts";

const bridge = await createBridge({ agent: reception, agents: { sales, support } });
bridge.on("call-start", ({ callId, event }) =>
  console.log(`call ${callId} to ${event.to}: agent ${event.agent}`),
);
console.log(`router ready: ${bridge.url}`);
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => void bridge.drain(5000).then(() => process.exit(0)));
