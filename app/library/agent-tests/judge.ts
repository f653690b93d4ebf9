// `says: {judge: RUBRIC}`: a chat model reads the call and says whether the agent met the rubric.
// It is the post-call analysis' path (src/agents/analysis.ts): one E1 request in JSON mode, the
// answer's JSON Schema in the system prompt (a verdict field whose description carries the rubric,
// and a reason), the answer checked against it. On the local service the scripted engine answers:
// it fills the schema without understanding it, so offline a verdict is a placeholder (docs/agent-tests.md).
import { analyseCall } from "../../../src/agents/analysis.ts";
import type { SvcClient } from "../../../src/api/client.ts";
import type { AnalysisPlan } from "../../../src/config/agent.ts";
import type { Judge } from "./expectations.ts";

/** How long the judge may take to answer, ms. */
const JUDGE_TIMEOUT_MS = 60_000;

function plan(rubric: string): AnalysisPlan {
  return {
    summary: false,
    fields: {
      verdict: {
        type: "string",
        enum: ["pass", "fail"],
        description: `"pass" when the agent's side of the call meets this rubric, else "fail". The rubric: ${rubric}`,
      },
      reason: { type: "string", description: "One sentence: why, quoting the agent where it helps." },
    },
  };
}

/** A judge asking `model` through the service's E1. */
export function chatJudge(client: SvcClient, model: string): Judge {
  return async (rubric, call) => {
    const turns = call.record?.turns ?? [];
    const analysis = await analyseCall(
      plan(rubric),
      turns,
      async (messages, signal) => {
        const answer = await client.chat.create(
          { model, messages, response_format: { type: "json_object" } },
          { signal },
        );
        return answer.choices[0]?.message.content ?? "";
      },
      JUDGE_TIMEOUT_MS,
    );
    if (analysis.status === "failed") return { pass: false, reason: `no verdict (${analysis.error})` };
    const { verdict, reason } = analysis.fields;
    return {
      pass: verdict === "pass",
      reason: `${verdict ?? "no verdict"}${typeof reason === "string" && reason ? `: ${reason}` : ""}`,
    };
  };
}
