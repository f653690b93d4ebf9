// What happens after an attempt: a person answered (done), or the outcome's policy says whether
// the row is called again and when. `attempts` counts every call to the row, whatever each
// outcome was: busy with attempts 3 means a row whose latest call was busy is called again while
// it has had fewer than three calls.
import { z } from "zod";
import type { AttemptOutcome, RetryableOutcome } from "./campaign.ts";

const rule = (attempts: number, delayS: number) =>
  z
    .object({
      attempts: z.number().int().min(1, { error: "expected 1 (no retry) or more" }).max(20).default(attempts),
      delayS: z
        .number()
        .min(0)
        .max(30 * 86_400)
        .default(delayS),
    })
    .strict()
    .prefault({});

export const retryPolicySchema = z
  .object({
    busy: rule(3, 600),
    "no-answer": rule(3, 1800),
    failed: rule(2, 300),
    voicemail: rule(2, 3600),
    "voicemail-left": rule(1, 3600),
    /** The bridge dialling the row died mid-call: another bridge (or this one, restarted) calls again. */
    lost: rule(3, 0),
  })
  .strict();

export type RetryPolicy = z.infer<typeof retryPolicySchema>;

export type RetryDecision = { retry: true; at: number } | { retry: false };

/** After attempt number `attempts` ended with `outcome` at `now` (epoch ms), before `endAt`. */
export function afterAttempt(
  policy: RetryPolicy,
  outcome: AttemptOutcome,
  attempts: number,
  now: number,
  endAt?: number,
): RetryDecision {
  if (!(outcome in policy)) return { retry: false };
  const r = policy[outcome as RetryableOutcome];
  if (attempts >= r.attempts) return { retry: false };
  const at = now + r.delayS * 1000;
  if (endAt !== undefined && at >= endAt) return { retry: false };
  return { retry: true, at };
}
