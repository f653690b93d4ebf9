// A shop's order hotline: the agent (hotline-agent.ts) on a bridge, each ended call logged.
//
//   npm install && npm start          then: npx voice-bridge call --say my-question.wav
//   npm test                          the agent's scenarios (hotline.test.yaml) on simulated calls
import { createBridge } from "voice-bridge";
import { hotline } from "./hotline-agent.ts";

const bridge = await createBridge({ agent: hotline });
bridge.on("call-end", (record) => {
  console.log(`call ${record.callId} from ${record.from ?? "?"} ended: ${record.endReason}`);
});
console.log(`hotline ready: ${bridge.url}`);
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => void bridge.drain(5000).then(() => process.exit(0)));
