// A scenario file (docs/agent-tests.md): the agent under test (a module's export, settings inline,
// or a config file), then scenarios, each a call: who calls whom, the caller's lines (text the
// service speaks, a WAV file, or keys), and what must be seen (the agent's words, its tool calls,
// how the call ended, a transfer, who answered, how soon). Checked whole before anything runs;
// every error names the file, the place in it and what is wrong.
import { readFile } from "node:fs/promises";
import { parseDocument } from "yaml";
import { z } from "zod";
import { agentName } from "../../../src/config/agent.ts";
import { CALL_OUTCOMES } from "../../../src/records/outcome.ts";
import type { AgentDefinition } from "../define-agent.ts";

/** `./agent.ts#hotline`: the export `hotline` of a module (the default export without `#name`). */
const moduleRef = z.string().regex(/^[^#\s][^#]*(#[A-Za-z_$][\w$]*)?$/, {
  error: "expected a module and its export, e.g. ./agent.ts#hotline",
});

const isMapping = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** An agent: a module's export (defineAgent), or its settings as in a config file (code may pass a defined agent). */
const agentSource = z.union([moduleRef, z.custom<AgentDefinition>(isMapping)], {
  error: "expected a module's export (./agent.ts#name) or the agent's settings (a mapping)",
});

/** Exactly one of `kinds` is set; each companion key only beside the kinds it goes with. */
function oneOf(kinds: readonly string[], companions: Record<string, readonly string[]> = {}) {
  return (v: Record<string, unknown>, ctx: z.RefinementCtx) => {
    const set = kinds.filter((k) => v[k] !== undefined);
    if (set.length !== 1) {
      ctx.addIssue({
        code: "custom",
        message: `expected exactly one of ${kinds.join(", ")}${set.length ? ` (found ${set.join(" and ")})` : ""}`,
      });
      return;
    }
    for (const [companion, with_] of Object.entries(companions))
      if (v[companion] !== undefined && !with_.includes(set[0]!))
        ctx.addIssue({
          code: "custom",
          path: [companion],
          message: `goes with ${with_.join(" or ")}, not with ${set[0]}`,
        });
  };
}

const regex = z.string().superRefine((p, ctx) => {
  try {
    new RegExp(p, "i");
  } catch (err) {
    ctx.addIssue({ code: "custom", message: `not a regular expression: ${(err as Error).message}` });
  }
});

const line = z
  .strictObject({
    say: z.string().min(1).optional().meta({ description: "Words the service's TTS speaks into the call." }),
    voice: z.string().min(1).optional().meta({ description: "The voice that says them." }),
    audio: z
      .string()
      .min(1)
      .optional()
      .meta({ description: "A WAV file (mono or stereo), from the file's folder." }),
    keys: z
      .string()
      .regex(/^[0-9*#A-Da-d]+$/, { error: "expected keypad keys: 0-9, *, # and A-D" })
      .optional()
      .meta({ description: "Keys pressed on the keypad (DTMF), e.g. 4217#." }),
  })
  .superRefine(oneOf(["say", "audio", "keys"], { voice: ["say"] }));

const callerLine = z.union(
  [
    z
      .string()
      .min(1)
      .transform((say): z.output<typeof line> => ({ say })),
    line,
  ],
  {
    error: "expected words to say, or a mapping with say, audio or keys",
  },
);

const words = z
  .strictObject({
    exact: z.string().min(1).optional(),
    pattern: regex.optional(),
    judge: z.string().min(1).optional(),
  })
  .superRefine(oneOf(["exact", "pattern", "judge"]));

const saysValue = z.union(
  [
    z
      .string()
      .min(1)
      .transform((exact): z.output<typeof words> => ({ exact })),
    words,
  ],
  {
    error: "expected the exact words, or a mapping with exact, pattern or judge",
  },
);

const scalar = z.union([z.string(), z.number(), z.boolean()]);

const expectation = z
  .strictObject({
    says: saysValue.optional(),
    /** Which of the agent's turns (1 = its first, the greeting when it greets), or the last; default any. */
    turn: z.union([z.number().int().min(1), z.literal("last")]).optional(),
    /** The opposite: no (selected) turn says it, or no such tool call is made. */
    not: z.boolean().optional(),
    tool: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, { error: "expected a tool's name" })
      .optional(),
    /** Arguments the call must have: each given one equal (as text), or matching `{pattern}`. */
    arguments: z.record(z.string(), z.union([scalar, z.strictObject({ pattern: regex })])).optional(),
    outcome: z.enum([...CALL_OUTCOMES, "rejected"]).optional(),
    /** true: the call was transferred; a number or SIP URI: transferred there; false: not transferred. */
    transfer: z.union([z.boolean(), z.string().min(1)]).optional(),
    /** The agent that took the call (routes, onCallStart, the webhook). */
    answeredBy: z.string().min(1).optional(),
    /** Each of the caller's lines answered (the agent's first audio) within this many ms of its end. */
    answersWithinMs: z.number().int().positive().optional(),
    /** The agent's first audio within this many ms of the call's start. */
    greetsWithinMs: z.number().int().positive().optional(),
  })
  .superRefine(
    oneOf(["says", "tool", "outcome", "transfer", "answeredBy", "answersWithinMs", "greetsWithinMs"], {
      turn: ["says"],
      not: ["says", "tool"],
      arguments: ["tool"],
    }),
  )
  .superRefine((v, ctx) => {
    if (v.says?.judge !== undefined && v.turn !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["turn"],
        message: "a judge reads the whole call: say which turn in the rubric",
      });
  });

const scenario = z.strictObject({
  name: z.string().min(1),
  /** The caller's number (Twilio From: routes, onCallStart, {{caller}}). */
  from: z.string().min(1).optional(),
  /** The number called (Twilio To). */
  to: z.string().min(1).optional(),
  /** The call's parameters ({{param.NAME}}, sent to the call-start webhook). */
  params: z.record(z.string(), z.string()).optional(),
  /** The call's variables ({{var.NAME}}), as onCallStart or the call-start webhook would set them. */
  variables: z.record(z.string().regex(/^[A-Za-z0-9_.-]+$/, { error: "a variable name" }), scalar).optional(),
  /** What the caller says, in order, each line once the agent has answered the one before. */
  caller: z.array(callerLine).default([]),
  expect: z.array(expectation).min(1, { error: "expected at least one expectation" }),
  /** The call is hung up after this long at the latest. */
  maxSeconds: z.number().positive().max(600).default(30),
});

export const scenarioSetSchema = z
  .strictObject({
    /** Shown in the results (default: the file's name). */
    name: z.string().min(1).optional(),
    /** The default agent (the one that takes calls no route gives to another). */
    agent: agentSource.optional(),
    /** Named agents (route targets), as `agents:` in a config file. */
    agents: z.record(agentName, agentSource).optional(),
    /** A config file (its agents, routes, service...), from the file's folder; agent/agents go over it. */
    config: z.string().min(1).optional(),
    /** The scripted engine's rules (local service only: what it does in place of a model). */
    scripted: z.string().min(1).optional(),
    /** Words the recognizer listens for (service.hotwords): the ones the caller's lines need heard. */
    hotwords: z.array(z.string().min(1)).optional(),
    /** The chat model that judges `says: {judge}` (default: the service's chat model). */
    judgeModel: z.string().min(1).optional(),
    /** The voice that says the caller's lines (default en_male_adam). */
    callerVoice: z.string().min(1).optional(),
    scenarios: z.array(scenario).min(1, { error: "expected at least one scenario" }),
  })
  .superRefine((v, ctx) => {
    const seen = new Set<string>();
    v.scenarios.forEach((s, i) => {
      if (seen.has(s.name))
        ctx.addIssue({
          code: "custom",
          path: ["scenarios", i, "name"],
          message: `a second scenario named "${s.name}"`,
        });
      seen.add(s.name);
    });
  });

/** A set of scenarios as written (a scenario file, or the same object in code). */
export type ScenarioSet = z.input<typeof scenarioSetSchema>;
/** A set checked, with its defaults. */
export type CheckedSet = z.output<typeof scenarioSetSchema>;
export type Scenario = CheckedSet["scenarios"][number];
export type CallerLine = Scenario["caller"][number];
export type Expectation = Scenario["expect"][number];

/** A scenario file that cannot be used: the file, and each place in it that is wrong and why. */
export class ScenarioFileError extends Error {
  override name = "ScenarioFileError";
  readonly file: string;
  readonly problems: readonly string[];
  constructor(file: string, problems: readonly string[]) {
    super(`${file}:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.file = file;
    this.problems = problems;
  }
}

/** Checks a set (from a file, or given in code as `name`); throws a ScenarioFileError naming each problem. */
export function checkScenarioSet(value: unknown, name: string): CheckedSet {
  const result = scenarioSetSchema.safeParse(value);
  if (result.success) return result.data;
  throw new ScenarioFileError(
    name,
    result.error.issues.map((i) => {
      // A bad key of a mapping (an agent's name) says why in the issue inside.
      const message = i.code === "invalid_key" ? (i.issues[0]?.message ?? i.message) : i.message;
      return `${i.path.length ? i.path.join(".") : "(the file)"}: ${message}`;
    }),
  );
}

/** Reads and checks a scenario file (YAML or JSON). */
export async function readScenarioFile(file: string): Promise<CheckedSet> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new ScenarioFileError(file, [`cannot read it (${(err as Error).message})`]);
  }
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length)
    throw new ScenarioFileError(
      file,
      doc.errors.map((e) => `not valid YAML: ${e.message.split("\n")[0]}`),
    );
  return checkScenarioSet(doc.toJS(), file);
}
