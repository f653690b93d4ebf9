// `tool()`: a tool the model can call, written in TypeScript. Its parameters are a zod schema: the
// model sees the JSON schema zod makes of it, and the arguments the model sends are checked against
// it before `execute` runs (wrong ones are told to the model, which can ask the caller again).
import { z } from "zod";
import type { ChatTool } from "../../src/api/types/index.ts";
import type { CodeTool, ToolContext } from "../../src/session/code-tools.ts";

export interface ToolDefinition<S extends z.ZodObject> {
  /** Letters, digits, _ and - (at most 64): what the model calls it by. */
  name: string;
  /** When the model should call it, and what it gives back. */
  description: string;
  /** The arguments: a zod object (its field descriptions become the model's). */
  parameters: S;
  /** How long `execute` may take before the model is told the tool did not answer, ms (default 5000). */
  timeoutMs?: number;
  /**
   * Runs the tool. What it returns is the result the model reads (text as it is, anything else as
   * JSON); what it throws is told to the model as an error.
   */
  execute(args: z.output<S>, ctx: ToolContext): unknown;
}

/** A tool made by `tool()`, for an agent's `tools`. */
export interface Tool extends CodeTool {
  readonly kind: "voice-bridge.tool";
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function tool<S extends z.ZodObject>(def: ToolDefinition<S>): Tool {
  if (!NAME.test(def.name))
    throw new TypeError(`tool "${def.name}": a name of letters, digits, _ and - (at most 64)`);
  if (!def.description.trim()) throw new TypeError(`tool "${def.name}": a description is required`);
  if (def.timeoutMs !== undefined && !(def.timeoutMs > 0))
    throw new TypeError(`tool "${def.name}": timeoutMs must be a positive number of milliseconds`);
  const { $schema: _dialect, ...schema } = z.toJSONSchema(def.parameters, {
    io: "input",
    unrepresentable: "any",
  });
  const parameters = {
    ...schema,
    type: "object",
    properties: schema.properties ?? {},
  } as ChatTool["function"]["parameters"];
  return {
    kind: "voice-bridge.tool",
    name: def.name,
    description: def.description,
    parameters,
    ...(def.timeoutMs !== undefined ? { timeoutMs: def.timeoutMs } : {}),
    run(args, ctx) {
      const parsed = def.parameters.safeParse(args);
      if (!parsed.success) {
        const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "arguments"}: ${i.message}`);
        throw new Error(`invalid arguments (${problems.join("; ")})`);
      }
      return def.execute(parsed.data, ctx);
    },
  };
}
