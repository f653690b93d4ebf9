// A character in a Discord voice channel: Nova (persona-agent.ts) answers when called by name, in
// her own voice, and rolls dice with a TypeScript tool. Each turn is posted to the console as it
// happens.
//
//   DISCORD_TOKEN=... npm start       then /join in a voice channel of a server the bot is in
//   npm test                          her scenarios (persona.test.yaml) on simulated phone calls
import { createBridge } from "voice-bridge";
import { nova } from "./persona-agent.ts";

const bridge = await createBridge({
  // DISCORD_TOKEN (and the rest of the environment) applies over these, as over a config file.
  discord: { respondTo: "mention", agentName: "Nova" },
  agents: { nova },
  routes: [{ transport: "discord", agent: "nova" }],
});
bridge.on("turn", (turn) => {
  const who = turn.role === "user" ? (turn.speaker ?? "someone") : "Nova";
  console.log(`${who}: ${turn.text}`);
});
console.log(`persona ready: ${bridge.url}`);
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => void bridge.drain(5000).then(() => process.exit(0)));
