// The one model of an agent: what a call's conversation is (prompt, greeting, voice, models,
// tools, turn-taking, limits, recording, analysis). The config file's `agent:` block and each
// entry of `agents:`, a call-start webhook's overrides and (later) the TypeScript API all produce
// it through this schema, so every source is checked the same way and reads the same errors.
import { z } from "zod";
import { mcpServersSchema } from "./mcp-servers.ts";
import { knownTimeZone, TEMPLATE_NAMES, unknownTemplateNames } from "./templates.ts";
import { flag, httpUrl, url, wordList } from "./values.ts";

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
  name: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, { error: "letters, digits, _ and - (at most 64)" })
    .meta({ description: "The tool's name as the model sees it." }),
  description: z
    .string()
    .min(1)
    .meta({ description: "What the tool does and when to use it, for the model." }),
  url: templatedUrl.meta({
    description: "Where the call goes; per-call variables in its path or query are filled (URL-encoded).",
  }),
  method: z
    .enum(["POST", "GET"])
    .default("POST")
    .meta({ description: "POST sends the arguments as a JSON body, GET as the query." }),
  timeoutMs: z.coerce.number().int().min(100).max(60_000).default(5000).meta({
    description: "Longest wait for the answer, ms; then the model is told the tool timed out.",
  }),
  headers: z.record(z.string(), templated).optional().meta({
    secret: true,
    description: "Request headers (an Authorization header, say), per-call variables filled.",
  }),
  body: z.record(z.string(), templated).optional().meta({
    description:
      "Fixed fields added to every request's JSON body (GET: its query), per-call variables filled.",
  }),
  parameters: z
    .record(
      z.string(),
      z.looseObject({
        type: z
          .enum(["string", "number", "integer", "object", "array", "boolean"])
          .meta({ description: "The argument's JSON type." }),
        description: z.string().optional().meta({ description: "What the argument is, for the model." }),
      }),
    )
    .default({})
    .meta({
      type: "mapping of argument name → JSON Schema",
      description:
        "JSON Schema of each argument; keys beyond type and description (enum, items…) go to the model as written.",
    }),
  required: z
    .array(z.string())
    .optional()
    .meta({ description: "Names of the arguments the model must give." }),
});

const analysisField = z
  .object({
    type: z
      .enum(["string", "number", "integer", "boolean"], {
        error: "expected string, number, integer or boolean",
      })
      .meta({ description: "The JSON type of the field's value." }),
    description: z.string().min(1).meta({ description: "What the model should put in the field." }),
    enum: z
      .array(z.string().min(1))
      .min(1)
      .optional()
      .meta({ description: "The only values allowed (a string field)." }),
  })
  .superRefine((v, ctx) => {
    if (v.enum && v.type !== "string")
      ctx.addIssue({ code: "custom", path: ["enum"], message: "only a string field takes an enum" });
  });

/** What is asked of the chat model once the call is over (one request in JSON mode). */
export const analysisSchema = z.object({
  summary: flag.default(true).meta({ description: "Ask for a short summary of the call." }),
  fields: z
    .record(
      z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, { error: "a name of letters, digits and _" }),
      analysisField,
    )
    .default({})
    .meta({ description: "Typed fields the model fills from the conversation, by name." }),
});

/** A whole number within bounds, its error saying which. */
const whole = (min: number, max?: number) => {
  const error = `expected a whole number from ${min}${max === undefined ? " up" : ` to ${max}`}`;
  const n = z.coerce.number({ error }).int({ error }).min(min, { error });
  return max === undefined ? n : n.max(max, { error });
};
const ms = whole;

/** How long each step of the service is waited for on a call (#54); see session/config.ts. */
const deadlinesSchema = z
  .object({
    chatFirstMs: ms(100, 30_000).default(1500).meta({
      description:
        "Longest wait for the chat's first chunk, ms; then a second (hedged) request starts beside it (see hedge).",
    }),
    chatGapMs: ms(100, 30_000).default(1500).meta({
      description:
        "Longest quiet between the chat's chunks once it streams, ms; then it counts as stalled and a new request takes the reply up where it stopped.",
    }),
    chatTotalMs: ms(500, 60_000).default(3000).meta({
      description:
        "From the first chat request to the first words, retries, hedges and fallbacks included, ms; then the caller hears apologyText.",
    }),
    asrMs: ms(200, 30_000).optional().meta({
      description:
        "Longest wait for the transcript after the caller's words were sent, ms; then recognition is tried again (on the fallback, when set) with the audio the bridge holds. Default 2000; 15000 on the embedded local service when it plays no hosted latency or faults (its engines share the bridge's CPU: a late transcript there is a busy machine, and asking again only adds work).",
    }),
    ttsFirstAudioMs: ms(200, 30_000).optional().meta({
      description:
        "Longest wait for synthesized audio after text was sent to a speech session (or for the session to open), ms; then the session is replaced. Default 1500; 10000 on the embedded local service when it plays no hosted latency or faults.",
    }),
  })
  .superRefine((v, ctx) => {
    if (v.chatTotalMs < v.chatFirstMs)
      ctx.addIssue({
        code: "custom",
        path: ["chatTotalMs"],
        message: `must be at least chatFirstMs (${v.chatFirstMs}): a hedged request could never start`,
      });
  });

const fallbackModel = (what: string) =>
  z
    .string()
    .min(1)
    .optional()
    .meta({ description: `${what} used when the agent's own fails.` });

/** Where a call's requests go when the agent's own service, model or voice fails (#54). */
const fallbackSchema = z
  .object({
    chatModel: fallbackModel("Chat model"),
    ttsModel: fallbackModel("Speech synthesis model"),
    voice: fallbackModel("Voice"),
    asrModel: fallbackModel("Speech recognition model"),
    baseUrl: httpUrl.optional().meta({
      description:
        "Another service (root or …/v1) for the fallback's requests; default: the agent's own service.",
    }),
    apiKey: z.string().min(1).optional().meta({
      secret: true,
      description: "Key for the fallback's baseUrl (the service's own key is never sent to another address).",
    }),
  })
  .superRefine((v, ctx) => {
    if (v.baseUrl && !v.apiKey)
      ctx.addIssue({
        code: "custom",
        path: ["apiKey"],
        message: "required with fallback.baseUrl: the service's own key is not sent to another address",
      });
    if (v.apiKey && !v.baseUrl)
      ctx.addIssue({ code: "custom", path: ["baseUrl"], message: "required with fallback.apiKey" });
    if (!Object.values(v).some((x) => x !== undefined))
      ctx.addIssue({
        code: "custom",
        message: "expected at least one of chatModel, ttsModel, voice, asrModel, baseUrl",
      });
  });

/** A phone menu answering the agent's outbound call: what it presses its way toward (docs/outbound.md). */
const ivrSchema = z.object({
  goal: z
    .string({
      error: 'expected what the agent is after in the menu, e.g. "reach the pharmacy\'s refill line"',
    })
    .pipe(templated)
    .meta({
      description:
        'What the agent is after in the menu, in words the model reads (per-call variables filled), e.g. "reach a person in billing" or "refill prescription {{var.rx}}".',
    }),
});

/** When a service target is skipped for the fallback: its circuit (#54). */
const circuitSchema = z.object({
  failures: whole(1, 1000).default(5).meta({
    description:
      "Failures of one target (service, endpoint, model) within windowSeconds that open its circuit.",
  }),
  windowSeconds: whole(1, 3600)
    .default(30)
    .meta({ description: "The window those failures are counted in, seconds." }),
  openSeconds: whole(1, 3600).default(20).meta({
    description:
      "How long an open circuit sends the target's requests to the fallback, seconds; then one request probes it, and its success closes the circuit.",
  }),
});

/**
 * Every setting of an agent, as written (before defaults). An `env` in a setting's meta is the
 * variable that sets it for the default agent only (`agent:` or `agents.default`, see config.ts).
 */
export const agentShape = {
  systemPrompt: templated.optional().meta({
    env: "AGENT_SYSTEM_PROMPT",
    description: "The model's instructions (per-call variables filled); default: a short phone-agent prompt.",
  }),
  greeting: templated
    .optional()
    .meta({ env: "AGENT_GREETING", description: "Spoken first; when absent the model greets." }),
  apologyText: templated.optional().meta({
    description:
      "Said when a turn fails on the service's side; default: \"Sorry, I'm having trouble on my side. Could you say that again?\"",
  }),
  askAgainText: templated.optional().meta({
    description:
      "Said when no words could be made out in the caller's own voice (a noisy line), at most twice in a row; default: \"Sorry, I didn't catch that. Could you say it again?\"",
  }),
  waitingCue: templated.optional().meta({
    description:
      'Said when the answer is late (waitingCueAfterMs after the caller stopped and still nothing to hear), e.g. "Mm-hm." or "One moment."; kept ready from call start, never over the caller, at most once a turn. Off when absent.',
  }),
  waitingCueAfterMs: ms(200, 5000).default(1200).meta({
    description: "How late an answer must be for the waiting cue, ms after the caller stopped speaking.",
  }),
  transferTarget: templated.optional().meta({
    env: "AGENT_TRANSFER_TARGET",
    description: "Phone number or SIP URI the transfer_call tool dials.",
  }),
  transferMode: z.enum(["blind", "warm"], { error: "expected blind or warm" }).default("blind").meta({
    description:
      "blind hands the call over at once (SIP REFER, Twilio <Dial>); warm lets the model choose: the bridge dials the person first, holds the caller, briefs the person and joins them only once they accept (SIP and Twilio calls; see docs/outbound.md#transfers).",
  }),
  transferHoldAudio: z.string().min(1).optional().meta({
    description:
      "A WAV file (PCM, any rate, mono or stereo) looped to the caller on hold during a warm transfer; default: a soft tone every two seconds.",
  }),
  transferHoldLine: templated.optional().meta({
    description: 'Said to the caller before the hold audio of a warm transfer, e.g. "One moment, please."',
  }),
  transferBrief: templated.optional().meta({
    description:
      "What the person who answers a warm transfer is told (per-call variables filled), before being asked to take the call (a spoken yes or 1); default: a summary of the call written by the model from the conversation.",
  }),
  transferAnswerSeconds: whole(5, 120).default(25).meta({
    description:
      "How long a warm transfer rings before the agent comes back to the caller (the answering-machine check and the brief come after), seconds.",
  }),
  voice: z.string().min(1).optional().meta({ description: "Service voice id (default: service.voice)." }),
  chatModel: z.string().min(1).optional().meta({ description: "Chat model (default: service.chatModel)." }),
  ttsModel: z
    .string()
    .min(1)
    .optional()
    .meta({ description: "Speech synthesis model (default: service.ttsModel)." }),
  asrModel: z
    .string()
    .min(1)
    .optional()
    .meta({ description: "Speech recognition model (default: service.asrModel)." }),
  language: z
    .string()
    .min(1)
    .optional()
    .meta({ description: "Recognition language (default: service.language)." }),
  hotwords: wordList
    .optional()
    .meta({ description: "Hotwords that bias recognition (default: service.hotwords)." }),
  timeZone: z
    .string()
    .refine(knownTimeZone, { error: "expected a time zone such as Europe/Paris or UTC" })
    .default("UTC")
    .meta({ description: "The time zone `{{now}}` is written in (an IANA name)." }),
  minEndOfTurnMs: ms(50, 5000)
    .default(250)
    .meta({ description: "Shortest silence after the caller's words before the agent answers, ms." }),
  maxEndOfTurnMs: ms(100, 10_000).default(1200).meta({
    description:
      "Longest silence before the caller's turn is taken as ended, however unsure the agent is, ms.",
  }),
  endOfTurnConfidence: z.coerce
    .number({ error: "expected a probability such as 0.9" })
    .gt(0.5, { error: "expected a probability above 0.5 and below 1, such as 0.9" })
    .lt(1, { error: "expected a probability above 0.5 and below 1, such as 0.9" })
    .default(0.9)
    .meta({
      env: "AGENT_END_OF_TURN_CONFIDENCE",
      description:
        "How sure the agent must be that the caller has finished before it speaks, above 0.5 and below 1: higher talks over fewer pauses and answers later.",
    }),
  // (The service reads the config too, so the path is written here, not imported from session/.)
  endOfTurnLm: z
    .preprocess((v) => (v === false ? "off" : v), z.string().min(1))
    .default("/usr/share/pocketsphinx/model/en-us/en-us.lm.bin")
    .meta({
      env: "AGENT_END_OF_TURN_LM",
      description:
        'The trigram model (sphinxbase binary) asked whether the words end a sentence; "off" for none.',
    }),
  endOfTurnLmWeight: z.coerce
    .number({ error: "expected a weight from 0 to 5, such as 1.3" })
    .min(0, { error: "expected a weight from 0 to 5, such as 1.3" })
    .max(5, { error: "expected a weight from 0 to 5, such as 1.3" })
    .default(1.3)
    .meta({
      env: "AGENT_END_OF_TURN_LM_WEIGHT",
      description: "How much the words count, in log-odds per decade of P(</s>); 0 leaves them out.",
    }),
  endOfTurnProsody: flag.default(false).meta({
    env: "AGENT_END_OF_TURN_PROSODY",
    description: "Weigh how the caller's voice ended (pitch fall or rise) as well as the words.",
  }),
  adaptToCaller: flag.default(true).meta({
    env: "AGENT_ADAPT_TO_CALLER",
    description: "Learn each caller's pauses within the call and lengthen or shorten their wait (bounded).",
  }),
  callerLevelGate: flag.default(true).meta({
    env: "AGENT_CALLER_LEVEL_GATE",
    description:
      "Take only speech at the caller's own level for theirs: a voice or noise in the room well below it neither holds their turn open nor stops the agent.",
  }),
  noiseSuppression: flag.default(false).meta({
    env: "AGENT_NOISE_SUPPRESSION",
    description:
      "Suppress the caller's steady noise (hiss, hum, engines) before voice detection and recognition, with WebRTC's suppressor (built by native/build.sh from Debian's libwebrtc-audio-processing-dev; without it, off). Recordings keep what was sent.",
  }),
  bargeInMinMs: ms(0, 2000)
    .default(180)
    .meta({ description: "Caller speech over the agent longer than this pauses the agent, ms." }),
  bargeInConfirmMs: ms(0, 5000).default(1000).meta({
    description:
      "Caller speech over the agent longer than this interrupts it for good (shorter is a backchannel: the agent resumes), ms.",
  }),
  repromptAfterMs: ms(1000).default(8000).meta({
    description:
      "Silence from the caller after the agent finished before it asks whether they are still there, ms.",
  }),
  maxReprompts: whole(0, 10)
    .default(2)
    .meta({ description: "Re-prompts without an answer before the agent says goodbye and hangs up." }),
  maxCallSeconds: whole(10)
    .default(900)
    .meta({ description: "Longest call, seconds; then the agent hangs up." }),
  historyTokens: whole(200, 100_000).default(2000).meta({
    description:
      "Tokens of recent turns sent to the model (o200k); older turns leave, their words kept in a digest of at most historyDigestTokens (0: dropped outright), so long calls cost no more per turn.",
  }),
  historyDigestTokens: whole(0, 10_000).default(300).meta({
    description:
      "Tokens of the digest that keeps the words of turns older than historyTokens (0: they are dropped).",
  }),
  handoffs: z.array(z.string().min(1)).default([]).meta({
    description:
      "Agents this one may hand the call to (the model's handoff tool): the same call goes on with that agent's prompt, voice, models and tools.",
  }),
  handoffHistory: z
    .enum(["whole", "summary", "none"], { error: "expected whole, summary or none" })
    .default("whole")
    .meta({
      description:
        "What the agent taking a call over from this one gets of the conversation: whole (the turns as they are), summary (a digest of what was said, at most its historyDigestTokens), or none.",
    }),
  handoffLine: templated.optional().meta({
    description:
      "Said by this agent when a call is handed to it; default: its greeting, else the model speaks first with the conversation it was given.",
  }),
  deadlines: deadlinesSchema.prefault({}).meta({
    description:
      "How long each step of the service is waited for on a call before it counts as failed and is hedged, retried or sent to the fallback (see docs/when-the-service-fails.md).",
  }),
  hedge: flag.default(true).meta({
    description:
      "When the chat has not answered within deadlines.chatFirstMs, start a second request (to fallback.chatModel when set) and use whichever answers first.",
  }),
  fallback: fallbackSchema.optional().meta({
    description:
      "Models, voice and service used when the agent's own fail or their circuit is open; any subset (unset keys keep the agent's own).",
  }),
  circuit: circuitSchema.prefault({}).meta({
    description:
      "When a failing target is skipped for the fallback (shared by every call to it; the first agent to use a target sets its circuit).",
  }),
  recording: flag
    .default(true)
    .meta({ description: "Record this agent's calls (when the bridge records: agent.recordingDir)." }),
  httpTools: z
    .array(httpToolSchema)
    .default([])
    .meta({ description: "User-defined HTTP tools the model may call." }),
  mcpServers: mcpServersSchema,
  analysis: analysisSchema
    .optional()
    .meta({ description: "Summary and typed fields asked of the model after each call." }),
  ivr: ivrSchema.optional().meta({
    description:
      "On outbound calls: when answering-machine detection finds a machine whose greeting ends without a beep (a phone menu), the agent listens to the menu and presses keys toward this goal (send_dtmf) instead of leaving the voicemail message; a machine that beeps still gets the message. Needs machineDetection on (with Twilio, message).",
  }),
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
export type AgentFallback = z.output<typeof fallbackSchema>;

/**
 * The config file's `agent:` block: the agent named `default`, plus where the bridge keeps call
 * records and recordings (bridge-wide settings that have always lived here).
 */
export const defaultAgentSchema = z
  .object({
    ...agentShape,
    transcriptDir: z.string().min(1).optional().meta({
      description: "Call records (JSON lines per call) go here; default: <local.dataDir>/calls.",
    }),
    recordingDir: z.string().min(1).optional().meta({
      env: "AGENT_RECORDING_DIR",
      description:
        "When set, calls are recorded here as <callId>.wav: stereo, caller left (a Discord channel's members mixed), agent (as heard) right.",
    }),
  })
  .superRefine(checkEndOfTurn);

/** Names of agents (route targets, the webhook's `agent`, the console's choice). */
export const agentName = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, { error: "an agent name of letters, digits, _ and - (at most 64)" });
