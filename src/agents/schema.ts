// The one model of an agent: what a call's conversation is (prompt, greeting, voice, models,
// tools, turn-taking, limits, recording, analysis). The config file's `agent:` block and each
// entry of `agents:`, a call-start webhook's overrides and (later) the TypeScript API all produce
// it through this schema, so every source is checked the same way and reads the same errors.
import { z } from "zod";
import { flag, url, wordList } from "../config-values.ts";
import { knownTimeZone, TEMPLATE_NAMES, unknownTemplateNames } from "./templates.ts";

/** A text in which per-call variables may appear (checked for names that cannot exist). */
const templated = z
  .string()
  .min(1)
  .superRefine((v, ctx) => {
    for (const name of unknownTemplateNames(v))
      ctx.addIssue({
        code: "custom",
        message: `unknown variable {{${name}}}: expected ${TEMPLATE_NAMES}`,
      });
  });

/** A URL whose path or query may hold per-call variables (filled per call, URL-encoded). */
const templatedUrl = url.pipe(templated);

export const httpToolSchema = z.object({
  name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, { error: "letters, digits, _ and - (at most 64)" }),
  description: z.string().min(1),
  url: templatedUrl,
  method: z.enum(["POST", "GET"]).default("POST"),
  timeoutMs: z.coerce.number().int().min(100).max(60_000).default(5000),
  headers: z.record(z.string(), templated).optional(),
  /** Fixed fields added to every request's JSON body (GET: its query), per-call variables filled. */
  body: z.record(z.string(), templated).optional(),
  /** JSON Schema of each argument; keys beyond type and description (enum, items…) go to the model as written. */
  parameters: z
    .record(
      z.string(),
      z.looseObject({
        type: z.enum(["string", "number", "integer", "object", "array", "boolean"]),
        description: z.string().optional(),
      }),
    )
    .default({}),
  required: z.array(z.string()).optional(),
});

const analysisField = z
  .object({
    type: z.enum(["string", "number", "integer", "boolean"], {
      error: "expected string, number, integer or boolean",
    }),
    description: z.string().min(1),
    /** The only values allowed (a string field). */
    enum: z.array(z.string().min(1)).min(1).optional(),
  })
  .superRefine((v, ctx) => {
    if (v.enum && v.type !== "string")
      ctx.addIssue({ code: "custom", path: ["enum"], message: "only a string field takes an enum" });
  });

/** What is asked of the chat model once the call is over (one request in JSON mode). */
export const analysisSchema = z.object({
  summary: flag.default(true),
  fields: z
    .record(
      z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, { error: "a name of letters, digits and _" }),
      analysisField,
    )
    .default({}),
});

/** A whole number within bounds, its error saying which. */
const whole = (min: number, max?: number) => {
  const error = `expected a whole number from ${min}${max === undefined ? " up" : ` to ${max}`}`;
  const n = z.coerce.number({ error }).int({ error }).min(min, { error });
  return max === undefined ? n : n.max(max, { error });
};
const ms = whole;

/** Every setting of an agent, as written (before defaults). */
export const agentShape = {
  systemPrompt: templated.optional(),
  /** Spoken first; when absent the model greets. */
  greeting: templated.optional(),
  apologyText: templated.optional(),
  /** Phone number or SIP URI the transfer_call tool dials. */
  transferTarget: templated.optional(),
  /** Service voice id (default: service.voice). */
  voice: z.string().min(1).optional(),
  chatModel: z.string().min(1).optional(),
  ttsModel: z.string().min(1).optional(),
  asrModel: z.string().min(1).optional(),
  /** Recognition language and hotwords (default: the service section's). */
  language: z.string().min(1).optional(),
  hotwords: wordList.optional(),
  /** The time zone `{{now}}` is written in (an IANA name). */
  timeZone: z
    .string()
    .refine(knownTimeZone, { error: "expected a time zone such as Europe/Paris or UTC" })
    .default("UTC"),
  minEndOfTurnMs: ms(50, 5000).default(250),
  maxEndOfTurnMs: ms(100, 10_000).default(1200),
  /** How sure the agent must be that the caller has finished before it speaks (see end-of-turn.ts). */
  endOfTurnConfidence: z.coerce
    .number({ error: "expected a probability such as 0.9" })
    .gt(0.5, { error: "expected a probability above 0.5 and below 1, such as 0.9" })
    .lt(1, { error: "expected a probability above 0.5 and below 1, such as 0.9" })
    .default(0.9),
  /** The trigram model (sphinxbase binary) asked whether the words end a sentence; "off" for none. */
  // (The service reads the config too, so the path is written here, not imported from session/.)
  endOfTurnLm: z
    .preprocess((v) => (v === false ? "off" : v), z.string().min(1))
    .default("/usr/share/pocketsphinx/model/en-us/en-us.lm.bin"),
  /** How much the words count, in log-odds per decade of P(</s>); 0 leaves them out. */
  endOfTurnLmWeight: z.coerce
    .number({ error: "expected a weight from 0 to 5, such as 1.3" })
    .min(0, { error: "expected a weight from 0 to 5, such as 1.3" })
    .max(5, { error: "expected a weight from 0 to 5, such as 1.3" })
    .default(1.3),
  /** Weigh how the caller's voice ended (pitch fall or rise) as well as the words. */
  endOfTurnProsody: flag.default(false),
  /** Learn each caller's pauses within the call and lengthen or shorten their wait (bounded). */
  adaptToCaller: flag.default(true),
  bargeInMinMs: ms(0, 2000).default(180),
  bargeInConfirmMs: ms(0, 5000).default(1000),
  repromptAfterMs: ms(1000).default(8000),
  maxReprompts: whole(0, 10).default(2),
  maxCallSeconds: whole(10).default(900),
  /**
   * Tokens of recent turns sent to the model (o200k); older turns leave, their words kept in a
   * digest of at most historyDigestTokens (0: dropped outright), so long calls cost no more per turn.
   */
  historyTokens: whole(200, 100_000).default(2000),
  historyDigestTokens: whole(0, 10_000).default(300),
  /** Record this agent's calls (when the bridge records: agent.recordingDir). */
  recording: flag.default(true),
  /** User-defined HTTP tools the model may call. */
  httpTools: z.array(httpToolSchema).default([]),
  /** Summary and typed fields asked of the model after each call. */
  analysis: analysisSchema.optional(),
};

function checkEndOfTurn(v: { minEndOfTurnMs: number; maxEndOfTurnMs: number }, ctx: z.RefinementCtx): void {
  if (v.maxEndOfTurnMs < v.minEndOfTurnMs)
    ctx.addIssue({
      code: "custom",
      path: ["maxEndOfTurnMs"],
      message: `must be at least minEndOfTurnMs (${v.minEndOfTurnMs})`,
    });
}

export const agentSchema = z.object(agentShape).superRefine(checkEndOfTurn);

/** An agent, validated, with its defaults. */
export type Agent = z.output<typeof agentSchema>;
/** An agent as written (config file, webhook overrides, code). */
export type AgentInput = z.input<typeof agentSchema>;
export type AnalysisPlan = z.output<typeof analysisSchema>;
export type HttpTool = z.output<typeof httpToolSchema>;

/**
 * The config file's `agent:` block: the agent named `default`, plus where the bridge keeps call
 * records and recordings (bridge-wide settings that have always lived here).
 */
export const defaultAgentSchema = z
  .object({
    ...agentShape,
    /** Call records (JSON lines per call) go here; default: <local.dataDir>/calls. */
    transcriptDir: z.string().min(1).optional(),
    /** When set, calls are recorded here as <callId>.wav: stereo, caller left, agent (as heard) right. */
    recordingDir: z.string().min(1).optional(),
  })
  .superRefine(checkEndOfTurn);

/** Names of agents (route targets, the webhook's `agent`, the console's choice). */
export const agentName = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, { error: "an agent name of letters, digits, _ and - (at most 64)" });
