// The call-start webhook: before a call is answered the bridge POSTs who is calling whom, signed
// as the call reports are (X-Voice-Bridge-Signature over "<timestamp>." + body), and the answer
// may pick the agent, add variables, override single settings, or reject the call. It must never
// hold a call hostage: a late, failed or unreadable answer leaves the route's agent in charge.
import { z } from "zod";
import type { WebhookConfig } from "../config/routes.ts";
import { SIGNATURE_HEADER, signReport, TIMESTAMP_HEADER } from "../records/reports/signature.ts";
import type { CallInfo } from "../session/transport.ts";

/** The request body (docs/agents.md, "The call-start webhook"). */
export interface CallStartRequest {
  callId: string;
  transport: CallInfo["transport"];
  from: string | null;
  to: string | null;
  params: Readonly<Record<string, string>>;
  /** The agent the routes chose; the answer may keep it or name another. */
  agent: string;
}

const scalar = z.union([z.string(), z.number(), z.boolean()]).transform(String);

/** The answer. Overrides are checked against the agent model once merged (see directory.ts). */
export const callStartAnswerSchema = z.object({
  agent: z.string().min(1).optional(),
  variables: z.record(z.string().regex(/^[A-Za-z0-9_.-]+$/), scalar).optional(),
  overrides: z.record(z.string(), z.unknown()).optional(),
  reject: z.union([z.boolean(), z.object({ reason: z.string().optional() })]).optional(),
});
export type CallStartAnswer = z.output<typeof callStartAnswerSchema>;

/** Why the answer was not used: the /metrics label and the warning's words. */
export type WebhookFailure = "timeout" | "http_error" | "unreachable" | "bad_answer";

export type WebhookResult =
  | { ok: true; answer: CallStartAnswer; ms: number }
  | { ok: false; cause: WebhookFailure; detail: string; ms: number };

export async function askCallStart(
  hook: WebhookConfig,
  request: CallStartRequest,
  wallNow: () => number = Date.now,
): Promise<WebhookResult> {
  const started = performance.now();
  const ms = () => Math.round((performance.now() - started) * 10) / 10;
  const body = Buffer.from(JSON.stringify(request));
  const timestamp = String(Math.floor(wallNow() / 1000));
  const timeout = AbortSignal.timeout(hook.timeoutMs);
  let status: number;
  let text: string;
  try {
    const res = await fetch(hook.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json",
        [TIMESTAMP_HEADER]: timestamp,
        [SIGNATURE_HEADER]: signReport(hook.secret, timestamp, body),
      },
      body,
      redirect: "manual",
      signal: timeout,
    });
    status = res.status;
    text = await res.text();
  } catch (err) {
    if (timeout.aborted)
      return { ok: false, cause: "timeout", detail: `no answer within ${hook.timeoutMs} ms`, ms: ms() };
    const cause = (err as Error & { cause?: Error }).cause?.message ?? (err as Error).message;
    return { ok: false, cause: "unreachable", detail: cause, ms: ms() };
  }
  if (status < 200 || status > 299)
    return { ok: false, cause: "http_error", detail: `HTTP ${status}: ${text.slice(0, 200)}`, ms: ms() };
  let json: unknown;
  try {
    json = text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    return { ok: false, cause: "bad_answer", detail: `not JSON: ${text.slice(0, 100)}`, ms: ms() };
  }
  const parsed = callStartAnswerSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.join(".") || "(the answer)";
    return { ok: false, cause: "bad_answer", detail: `${where}: ${issue.message}`, ms: ms() };
  }
  return { ok: true, answer: parsed.data, ms: ms() };
}
