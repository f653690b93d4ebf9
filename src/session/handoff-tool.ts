// The model's `handoff` tool: offered when the agent names agents it may hand the call to, with
// their names as an enum so the model cannot invent one; a name outside them is told to the model
// as an error it can talk about (tools.ts never throws into the call).
import type { ChatTool } from "../api/types/index.ts";

export const HANDOFF = "handoff";

export function handoffTool(agents: readonly string[]): ChatTool {
  return {
    type: "function",
    function: {
      name: HANDOFF,
      description:
        "Hand the call to another agent, once you have told the caller you are doing so: it takes over this same call.",
      parameters: {
        type: "object",
        properties: {
          agent: { type: "string", enum: [...agents], description: "the agent to hand the call to" },
          reason: { type: "string", description: "why, in a few words, for the agent taking over" },
        },
        required: ["agent"],
      },
    },
  };
}

export type HandoffRequest =
  | { kind: "handoff"; agent: string; reason: string }
  | { kind: "result"; content: string };

/** A handoff to `agent` (for `reason`), when this agent may hand calls to it. */
export function handoffRequest(agent: unknown, reason: unknown, allowed: readonly string[]): HandoffRequest {
  if (typeof agent !== "string" || !allowed.includes(agent))
    return {
      kind: "result",
      content: `error: cannot hand the call to ${String(agent)}; the agents are: ${allowed.join(", ") || "none"}`,
    };
  return { kind: "handoff", agent, reason: typeof reason === "string" ? reason : "" };
}
