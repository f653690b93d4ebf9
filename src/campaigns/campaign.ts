// A campaign: a list of people to call with one agent, within calling hours, at a pace, under a
// concurrency cap, each unanswered call retried as its outcome's policy says, between a start and
// an end. This file holds the model (statuses, outcomes, the settings) and checks the settings a
// request sends, naming the field at fault.
import { z } from "zod";
import { MACHINE_DETECTION } from "../config/outbound.ts";
import { dialTarget } from "../outbound/request.ts";
import { type CallingHours, callingHoursSchema, validZone } from "./calling-hours.ts";
import { type RetryPolicy, retryPolicySchema } from "./retry-policy.ts";

/** A campaign as a whole: working (`running`), held (`paused`), stopped for good, or through its list. */
export const CAMPAIGN_STATUSES = ["running", "paused", "canceled", "completed"] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

/**
 * A row: waiting for its next attempt (`pending`), being dialled (`dialing`), no more calls
 * (`done`: answered, or its outcome's retries used up), never dialled (`skipped`: do-not-call),
 * or `canceled` with its campaign.
 */
export const ROW_STATUSES = ["pending", "dialing", "done", "skipped", "canceled"] as const;
export type RowStatus = (typeof ROW_STATUSES)[number];

/**
 * How one attempt ended: a person answered, a machine answered (the message left or not), busy,
 * no answer, failed (the carrier's error, or the bridge refused), `lost` (the bridge dialling it
 * died), `do-not-call` (the number was on the list at dial time), `canceled` (with the campaign).
 */
export const ATTEMPT_OUTCOMES = [
  "answered",
  "voicemail",
  "voicemail-left",
  "busy",
  "no-answer",
  "failed",
  "lost",
  "do-not-call",
  "canceled",
] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

/** The outcomes a retry policy can name: the others never retry. */
export const RETRYABLE = ["busy", "no-answer", "failed", "voicemail", "voicemail-left", "lost"] as const;
export type RetryableOutcome = (typeof RETRYABLE)[number];

const VAR_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const iso = z.iso.datetime({ offset: true, error: "expected an ISO 8601 time such as 2025-03-01T09:00:00Z" });

/** What a campaign is, as POST /campaigns and the library take it (the list apart). */
export const campaignSettingsSchema = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    agent: z.string().trim().min(1, { error: "expected an agent's name" }).default("default"),
    via: z.enum(["sip", "twilio"], { error: 'expected "sip" or "twilio"' }).default("sip"),
    from: z.string().optional(),
    ringTimeoutS: z.number().int().min(5).max(120).optional(),
    machineDetection: z.enum(MACHINE_DETECTION, { error: "expected off, hangup or message" }).optional(),
    voicemailMessage: z.string().min(1).max(2000).optional(),
    timeZone: z
      .string()
      .refine(validZone, { error: "expected an IANA time zone such as Europe/Paris or America/New_York" })
      .default("UTC"),
    callingHours: callingHoursSchema.prefault({}),
    concurrency: z.number().int().min(1).max(10_000).default(5),
    pacePerMinute: z.number().min(0.1).max(60_000).default(30),
    retry: retryPolicySchema.prefault({}),
    startAt: iso.optional(),
    endAt: iso.optional(),
    doNotCall: z
      .array(z.string())
      .max(1000, { error: "at most 1,000 numbers here: put a longer list in campaigns.doNotCallFile" })
      .default([]),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.from !== undefined && !dialTarget(s.from, s.via))
      ctx.addIssue({ code: "custom", path: ["from"], message: "expected a number or (via sip) a SIP URI" });
    if (s.startAt && s.endAt && Date.parse(s.endAt) <= Date.parse(s.startAt))
      ctx.addIssue({ code: "custom", path: ["endAt"], message: "expected a time after startAt" });
    s.doNotCall.forEach((n, i) => {
      if (!dialTarget(n, s.via))
        ctx.addIssue({
          code: "custom",
          path: ["doNotCall", i],
          message: `not a number: ${JSON.stringify(n)}`,
        });
    });
  });

export type CampaignSettings = z.infer<typeof campaignSettingsSchema>;

/** What may change while a campaign runs (PATCH /campaigns/:id). */
export const campaignChangeSchema = z
  .object({
    pacePerMinute: z.number().min(0.1).max(60_000).optional(),
    concurrency: z.number().int().min(1).max(10_000).optional(),
    callingHours: callingHoursSchema.optional(),
    endAt: iso.optional(),
  })
  .strict();
export type CampaignChange = z.infer<typeof campaignChangeSchema>;

/** A callee as stored: the number to dial, its variables, its zone (the campaign's when it has none). */
export interface CampaignRowInput {
  readonly number: string;
  readonly variables: Record<string, string>;
  readonly timeZone?: string;
  /** Where it came from in the list (1-based line of a CSV, index + 1 of a JSON array). */
  readonly line: number;
}

export interface Campaign {
  readonly id: string;
  readonly name: string;
  readonly status: CampaignStatus;
  readonly settings: CampaignSettings;
  readonly createdAt: string;
  /** Why the bridge paused it by itself (the agent is gone, dialling is not configured). */
  readonly pausedReason?: string;
}

export interface CampaignCounts {
  readonly rows: number;
  readonly byStatus: Partial<Record<RowStatus, number>>;
  readonly byOutcome: Partial<Record<AttemptOutcome, number>>;
  /** Calls placed so far (every attempt). */
  readonly attempts: number;
}

export type CampaignView = Campaign & { readonly counts: CampaignCounts };

/** One attempt of a campaign's, newest first in GET /campaigns/:id/calls: whom, which attempt, its call. */
export interface CampaignCall {
  /** The call's record (GET /calls/:id); absent while it is being placed, or when it never was. */
  readonly callId?: string;
  readonly number: string;
  /** The row's place in the campaign's list, from 1. */
  readonly row: number;
  readonly attempt: number;
  /** The bridge that placed it. */
  readonly instance: string;
  readonly startedAt: string;
  readonly endedAt?: string;
  readonly outcome?: AttemptOutcome;
}

/** One problem of a request: the field (or `line N: field` of a list) and what was wrong. */
export interface FieldProblem {
  readonly field: string;
  readonly message: string;
  /** The list's line (CSV) or row (JSON, 1-based), for a row's problem. */
  readonly line?: number;
}

/** The settings of a request, or every problem with them, each naming its field. */
export function parseSettings(
  raw: unknown,
): { ok: true; settings: CampaignSettings } | { ok: false; problems: FieldProblem[] } {
  const r = campaignSettingsSchema.safeParse(raw);
  if (r.success) return { ok: true, settings: r.data };
  return {
    ok: false,
    problems: r.error.issues.map((i) => ({ field: i.path.join(".") || "body", message: i.message })),
  };
}

export function parseChange(
  raw: unknown,
): { ok: true; change: CampaignChange } | { ok: false; problems: FieldProblem[] } {
  const r = campaignChangeSchema.safeParse(raw);
  if (r.success) return { ok: true, change: r.data };
  return {
    ok: false,
    problems: r.error.issues.map((i) => ({ field: i.path.join(".") || "body", message: i.message })),
  };
}

export function validVarName(name: string): boolean {
  return VAR_NAME.test(name);
}

export type { CallingHours, RetryPolicy };
