// The post-call analysis: once a call is over, one chat request in JSON mode (E1
// `response_format: json_object`) asks for a summary and the agent's declared fields, described to
// the model by a JSON Schema in the system prompt. The answer is checked against the declared
// types (an integer is whole, an enum value is one of its list); anything else is a failed
// analysis, recorded as such, and the call's report goes out either way.
import type { ChatMessage } from "../api/types/index.ts";
import type { AnalysisPlan } from "../config/agent.ts";
import { isObject } from "../core/guards.ts";
import type { CallAnalysis, TurnView } from "../records/call-record.ts";

/** One E1 request and its answer's text (the API client's chat.create, in production). */
export type CompleteJson = (messages: ChatMessage[], signal: AbortSignal) => Promise<string>;

/** The JSON Schema of the answer asked for: `{summary, fields: {…}}`. */
export function analysisJsonSchema(plan: AnalysisPlan): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [name, f] of Object.entries(plan.fields))
    fields[name] = { type: f.type, description: f.description, ...(f.enum ? { enum: f.enum } : {}) };
  const properties: Record<string, unknown> = {};
  if (plan.summary)
    properties.summary = {
      type: "string",
      description: "two or three sentences: what the caller wanted and how the call ended",
    };
  properties.fields = { type: "object", properties: fields, required: Object.keys(fields) };
  return { type: "object", properties, required: Object.keys(properties) };
}

export function analysisMessages(plan: AnalysisPlan, turns: readonly TurnView[]): ChatMessage[] {
  const transcript = turns
    .map((t) =>
      t.role === "user" ? `Caller${t.speaker ? ` (${t.speaker})` : ""}: ${t.text}` : `Agent: ${t.text}`,
    )
    .join("\n");
  return [
    {
      role: "system",
      content:
        "You analyse a finished phone call between a caller and an agent. Answer with one JSON object " +
        "and nothing else, matching this JSON Schema:\n```json\n" +
        `${JSON.stringify(analysisJsonSchema(plan))}\n\`\`\`\n` +
        "Use null for a field the call does not tell.",
    },
    { role: "user", content: transcript || "(nobody spoke)" },
  ];
}

/** Checks the model's answer against the plan: the analysis, or why it is unusable. */
export function readAnalysis(plan: AnalysisPlan, text: string): CallAnalysis {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { status: "failed", error: `the answer is not JSON: ${text.slice(0, 120)}` };
  }
  if (!isObject(json)) return { status: "failed", error: "the answer is not a JSON object" };
  let summary: string | undefined;
  if (plan.summary) {
    if (typeof json.summary !== "string" || json.summary.trim() === "")
      return { status: "failed", error: "summary: expected a non-empty string" };
    summary = json.summary.trim();
  }
  const given = isObject(json.fields) ? json.fields : {};
  const fields: Record<string, string | number | boolean | null> = {};
  for (const [name, f] of Object.entries(plan.fields)) {
    const v = given[name];
    if (v === undefined || v === null) {
      fields[name] = null;
      continue;
    }
    const ok =
      f.type === "string"
        ? typeof v === "string" && (!f.enum || f.enum.includes(v))
        : f.type === "integer"
          ? Number.isInteger(v)
          : f.type === "number"
            ? typeof v === "number" && Number.isFinite(v)
            : typeof v === "boolean";
    if (!ok)
      return {
        status: "failed",
        error: `fields.${name}: expected ${f.enum ? `one of ${f.enum.join(", ")}` : `a ${f.type}`}, got ${JSON.stringify(v)}`,
      };
    fields[name] = v as string | number | boolean;
  }
  return { status: "done", ...(summary !== undefined ? { summary } : {}), fields };
}

/** Runs the analysis of a call; never throws (a failure is an analysis with status failed). */
export async function analyseCall(
  plan: AnalysisPlan,
  turns: readonly TurnView[],
  complete: CompleteJson,
  timeoutMs = 30_000,
): Promise<CallAnalysis> {
  try {
    const text = await complete(analysisMessages(plan, turns), AbortSignal.timeout(timeoutMs));
    return readAnalysis(plan, text);
  } catch (err) {
    return { status: "failed", error: (err as Error).message };
  }
}
