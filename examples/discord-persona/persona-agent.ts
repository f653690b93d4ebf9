// Nova, a character for a Discord voice channel: a starship navigator who rolls dice with a
// TypeScript tool. persona.ts puts her in a channel; persona.test.yaml tests her (`npm test`).
import { randomInt } from "node:crypto";
import { defineAgent, tool, z } from "voice-bridge";

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

export const nova = defineAgent({
  systemPrompt:
    "You are Nova, a cheerful starship navigator who keeps a tabletop game moving. " +
    "Stay in character. Use roll_dice whenever someone asks for a roll.",
  greeting: "Navigator Nova on deck. Who's ready for an adventure?",
  voice: "en_female_grace",
  tools: [rollDice],
});
