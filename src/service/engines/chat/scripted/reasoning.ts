// The scripted agent's visible reasoning: a short account of what it heard and why it acts as it
// does, longer with higher effort.
import type { ReasoningEffort } from "../../../../api/types/index.ts";
import type { Agent } from "./agent.ts";
import type { Decision } from "./decide.ts";

export function reasoningText(agent: Agent, d: Decision, effort: ReasoningEffort): string {
  const label = d.intent
    .replace(/^ask:/, "")
    .replace(/^tool_result:?/, "")
    .replace(/_/g, " ");
  const lines: string[] = [];
  if (d.intent === "greeting") lines.push("The call has just started, so I greet the caller.");
  else if (d.intent.startsWith("tool_result"))
    lines.push("A tool result came back; I tell the caller what it says.");
  else lines.push(d.heard ? `The caller said: "${d.heard}".` : "The caller sent no words I can use.");
  if (d.intent === "fallback") lines.push("That matches nothing I handle, so I offer what I can do.");
  else if (d.intent === "media") lines.push("They showed me media, so I describe what I perceive.");
  else if (d.intent.startsWith("ask:"))
    lines.push(`That is about ${label}, but I still need details, so I ask.`);
  else if (!d.intent.startsWith("tool_result") && d.intent !== "greeting")
    lines.push(`That is about ${label}.`);
  if (effort !== "low") {
    lines.push(
      d.toolCall
        ? `I will call ${d.toolCall.name} with ${JSON.stringify(d.toolCall.arguments)}.`
        : "No tool is needed; I answer directly.",
    );
  }
  if (effort === "high") {
    const topics = agent.rules.map((r) => r.intent.replace(/_/g, " ")).join(", ");
    lines.push(`I weighed the topics I handle (${topics}) and keep the answer short for the phone.`);
  }
  return lines.join(" ");
}
