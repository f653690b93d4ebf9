// The scripted agent's definition: a YAML file (documented in ../demo-hotline.yaml, the default),
// validated on load so a typo names its key instead of misbehaving on a call.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { z } from "zod";

export const DEFAULT_AGENT_FILE = fileURLToPath(new URL("../demo-hotline.yaml", import.meta.url));

const pattern = z.string().superRefine((src, ctx) => {
  try {
    new RegExp(src, "i");
  } catch (err) {
    ctx.addIssue({ code: "custom", message: `not a valid regular expression: ${(err as Error).message}` });
  }
});

const ruleSchema = z.strictObject({
  intent: z.string().min(1),
  when: z.array(pattern).min(1),
  slots: z.record(z.string(), pattern).optional(),
  ask: z.string().optional(),
  reply: z.string().optional(),
  tool: z
    .strictObject({
      name: z.string().regex(/^[A-Za-z0-9_-]+$/),
      arguments: z.record(z.string(), z.unknown()).default({}),
    })
    .optional(),
  without_tool: z.string().optional(),
  after_tool: z.string().optional(),
});

const agentSchema = z.strictObject({
  name: z.string().min(1),
  greeting: z.string().min(1),
  fallback: z.string().min(1),
  after_tool_default: z.string().default("All done."),
  media: z
    .strictObject({
      image: z.string().default("I can see a {width} by {height} pixel {format} image."),
      video: z.string().default("I see a {format} video of about {seconds} seconds."),
      audio_unheard: z
        .string()
        .default("I got {seconds} seconds of audio, but I can't listen to it right now."),
    })
    .prefault({}),
  rules: z.array(ruleSchema),
});

export type AgentRule = z.infer<typeof ruleSchema>;
export type AgentDefinition = z.infer<typeof agentSchema>;

/** A rule with its patterns compiled. */
export interface CompiledRule extends AgentRule {
  whenRe: RegExp[];
  slotRe: [string, RegExp][];
}

export interface Agent extends Omit<AgentDefinition, "rules"> {
  rules: CompiledRule[];
}

export function parseAgent(text: string, source = "agent"): Agent {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new Error(`${source}: not valid YAML: ${(err as Error).message}`);
  }
  const result = agentSchema.safeParse(raw);
  if (!result.success) {
    const problems = result.error.issues.map((i) => `  - ${i.path.join(".") || "(top)"}: ${i.message}`);
    throw new Error(`${source}: invalid scripted agent:\n${problems.join("\n")}`);
  }
  const def = result.data;
  return {
    ...def,
    rules: def.rules.map((r) => ({
      ...r,
      whenRe: r.when.map((p) => new RegExp(p, "i")),
      slotRe: Object.entries(r.slots ?? {}).map(([k, p]) => [k, new RegExp(p, "i")] as [string, RegExp]),
    })),
  };
}

export function loadAgent(file: string = DEFAULT_AGENT_FILE): Agent {
  return parseAgent(readFileSync(file, "utf8"), file);
}
