// A character in a Discord voice channel: Nova answers when called by name, in her own voice, and
// rolls dice with a TypeScript tool. Each turn is posted to the console as it happens.
//
//   DISCORD_TOKEN=... npm start       then /join in a voice channel of a server the bot is in
import { randomInt } from "node:crypto";
import { createBridge, defineAgent, tool, z } from "voice-bridge";

const rollDice = tool({
  name: "roll_dice",
  description: "Rolls dice for the players, e.g. two six-sided dice.",
  parameters: z.object({
    count: z.number().int().min(1).max(10).default(1).describe("how many dice"),
    sides: z.number().int().min(2).max(100).default(6).describe("sides of each die"),
  }),
  execute: ({ count, sides }) => {
    const rolls = Array.from({ length: count }, () => randomInt(1, sides + 1));
    return { rolls, total: rolls.reduce((a, b) => a + b, 0) };
  },
});

const nova = defineAgent({
  systemPrompt:
    "You are Nova, a cheerful starship navigator who keeps a tabletop game moving. " +
    "Stay in character. Use roll_dice whenever someone asks for a roll.",
  greeting: "Navigator Nova on deck. Who's ready for an adventure?",
  voice: "en_female_grace",
  tools: [rollDice],
  onTurn: (turn) => {
    const who = turn.role === "user" ? (turn.speaker ?? "someone") : "Nova";
    console.log(`${who}: ${turn.text}`);
  },
});

const bridge = await createBridge({
  // DISCORD_TOKEN (and the rest of the environment) applies over these, as over a config file.
  discord: { respondTo: "mention", agentName: "Nova" },
  agents: { nova },
  routes: [{ transport: "discord", agent: "nova" }],
});
console.log(`persona ready: ${bridge.url}`);
for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.once(signal, () => void bridge.drain(5000).then(() => process.exit(0)));
