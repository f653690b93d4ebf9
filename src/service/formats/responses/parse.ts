// E3 request → canonical request plus the echo of the request parameters the response object
// carries. Only svc-3.7-flash, only function tools, only tool_choice "auto"; undocumented fields
// are ignored.
import {
  LIMITS,
  RESPONSES_MODELS,
  type ResponseObject,
  type ResponsesFunctionTool,
} from "../../../api/types/index.ts";
import { badParam, unusable } from "../../errors.ts";
import type {
  ConvMessage,
  GenRequest,
  InputPart,
  OutputFormat,
  ToolCallRecord,
  ToolSpec,
} from "../../generation/request.ts";
import { chatModel, reasoningEffort } from "../models.ts";
import { toolName, toolParameters } from "../tool-schema.ts";
import {
  array,
  body as asBody,
  boolean,
  isObject,
  type Json,
  number,
  object,
  oneOf,
  optional,
  required,
  string,
} from "../validate.ts";

/** The echoed request parameters of a response object. */
export type ResponseEcho = Pick<
  ResponseObject,
  | "instructions"
  | "max_output_tokens"
  | "reasoning"
  | "temperature"
  | "top_p"
  | "text"
  | "tool_choice"
  | "tools"
>;

export interface ResponsesCall {
  gen: GenRequest;
  stream: boolean;
  echo: ResponseEcho;
}

export function parseResponses(raw: unknown): ResponsesCall {
  const b = asBody(raw);
  const model = chatModel(b.model, RESPONSES_MODELS);
  const instructions = optional(b, "instructions", "instructions", string);
  const messages: ConvMessage[] = instructions ? [{ role: "system", text: instructions }] : [];
  const input = b.input;
  if (input === undefined || input === null)
    throw badParam("input", "is required: a string or an array of input items", "missing_required_parameter");
  if (typeof input === "string") messages.push({ role: "user", parts: [{ type: "text", text: input }] });
  else messages.push(...parseItems(array(input, "input")));
  if (!messages.some((m) => m.role !== "system"))
    throw badParam("input", "must hold at least one input item");

  const rawTools = optional(b, "tools", "tools", array) ?? [];
  const tools = rawTools.map((t, i) => parseTool(t, `tools[${i}]`));
  if (b.tool_choice !== undefined && b.tool_choice !== null && b.tool_choice !== "auto") {
    throw badParam("tool_choice", `only "auto" is supported (got ${JSON.stringify(b.tool_choice)})`);
  }
  const reasoning = optional(b, "reasoning", "reasoning", object);
  const effort = reasoning
    ? optional(reasoning, "effort", "reasoning.effort", reasoningEffort(model))
    : undefined;
  const summary = reasoning
    ? optional(reasoning, "summary", "reasoning.summary", oneOf(["auto", "concise", "detailed"] as const))
    : undefined;
  const text = optional(b, "text", "text", object);
  const format = text ? optional(text, "format", "text.format", object) : undefined;
  const output = format ? outputFormat(format) : ({ kind: "text" } as OutputFormat);
  const gen: GenRequest = { model, messages, tools, stop: [], output };
  const maxOut = optional(b, "max_output_tokens", "max_output_tokens", number({ min: 1, int: true }));
  if (maxOut !== undefined) gen.maxTokens = maxOut;
  const temperature = optional(b, "temperature", "temperature", number(LIMITS.temperature));
  if (temperature !== undefined) gen.temperature = temperature;
  const topP = optional(b, "top_p", "top_p", number({ min: 0, max: 1 }));
  if (topP !== undefined) gen.topP = topP;
  if (effort) gen.reasoning = { effort, emit: true };
  return {
    gen,
    stream: optional(b, "stream", "stream", boolean) ?? false,
    echo: {
      instructions: instructions ?? null,
      max_output_tokens: maxOut ?? null,
      reasoning: { effort: effort ?? null, summary: summary ?? null },
      temperature: temperature ?? null,
      top_p: topP ?? null,
      text: { ...(text ?? {}), format: (format as { type: string } | undefined) ?? { type: "text" } },
      tool_choice: "auto",
      tools: rawTools as ResponsesFunctionTool[],
    },
  };
}

function outputFormat(f: Json): OutputFormat {
  const type = required(
    f,
    "type",
    "text.format.type",
    oneOf(["text", "json_object", "json_schema"] as const),
    "text, json_object or json_schema",
  );
  if (type === "text") return { kind: "text" };
  if (type === "json_object") return { kind: "json" };
  const schema = required(f, "schema", "text.format.schema", object, "a JSON Schema object");
  const name = optional(f, "name", "text.format.name", string);
  return name ? { kind: "json", schema, name } : { kind: "json", schema };
}

function parseTool(v: unknown, param: string): ToolSpec {
  const t = object(v, param);
  required(
    t,
    "type",
    `${param}.type`,
    oneOf(["function"] as const),
    '"function" (only function tools are supported)',
  );
  return {
    name: required(t, "name", `${param}.name`, toolName, "the function name"),
    description: optional(t, "description", `${param}.description`, string) ?? "",
    parameters: toolParameters(t.parameters, `${param}.parameters`),
  };
}

const ROLES = ["user", "system", "developer", "assistant"] as const;

function parseItems(items: unknown[]): ConvMessage[] {
  const out: ConvMessage[] = [];
  const callIds = new Set<string>();
  items.forEach((raw, i) => {
    const p = `input[${i}]`;
    const item = object(raw, p);
    const type = item.type ?? "message";
    if (type === "message") {
      const role = required(item, "role", `${p}.role`, oneOf(ROLES), ROLES.join(", "));
      const parts = content(item.content, `${p}.content`);
      if (role === "user") out.push({ role, parts });
      else {
        const text = parts.map((x) => (x.type === "text" ? x.text : "")).join("");
        if (role === "assistant") out.push({ role, text, toolCalls: [] });
        else out.push({ role: "system", text });
      }
    } else if (type === "function_call") {
      const call: ToolCallRecord = {
        id: required(item, "call_id", `${p}.call_id`, string, "the call id"),
        name: required(item, "name", `${p}.name`, string, "the function name"),
        arguments: optional(item, "arguments", `${p}.arguments`, string) ?? "{}",
      };
      callIds.add(call.id);
      const prev = out[out.length - 1];
      if (prev?.role === "assistant") prev.toolCalls.push(call);
      else out.push({ role: "assistant", text: "", toolCalls: [call] });
    } else if (type === "function_call_output") {
      const callId = required(item, "call_id", `${p}.call_id`, string, "the id of the call answered");
      if (!callIds.has(callId))
        throw unusable(`${p}.call_id`, `${JSON.stringify(callId)} answers no earlier function_call`);
      const output = item.output;
      const text =
        typeof output === "string"
          ? output
          : content(output, `${p}.output`)
              .map((x) => (x.type === "text" ? x.text : ""))
              .join("");
      out.push({ role: "tool", callId, content: text });
    } else if (type !== "reasoning") {
      throw badParam(
        `${p}.type`,
        `must be message, function_call, function_call_output or reasoning (got ${JSON.stringify(type)})`,
      );
    }
  });
  return out;
}

const PART_TYPES = ["input_text", "output_text", "input_image", "input_video", "refusal"] as const;

function content(v: unknown, param: string): InputPart[] {
  if (typeof v === "string") return [{ type: "text", text: v }];
  return array(v, param).map((raw, i) => {
    const p = `${param}[${i}]`;
    const part = object(raw, p);
    const type = required(part, "type", `${p}.type`, oneOf(PART_TYPES), PART_TYPES.join(", "));
    if (type === "input_text" || type === "output_text") {
      return { type: "text", text: required(part, "text", `${p}.text`, string, "the text") };
    }
    if (type === "refusal")
      return { type: "text", text: required(part, "refusal", `${p}.refusal`, string, "the refusal text") };
    if (type === "input_video") {
      return {
        type: "video",
        url: required(part, "video_url", `${p}.video_url`, string, "the video URL"),
        param: `${p}.video_url`,
      };
    }
    const detail = optional(part, "detail", `${p}.detail`, oneOf(["low", "high", "auto"] as const)) ?? "low";
    const fileId = isObject(part) ? part.file_id : undefined;
    if (typeof fileId === "string" && part.image_url === undefined) {
      return {
        type: "image",
        url: `svcfile://${fileId}`,
        param: `${p}.file_id`,
        detail: detail === "high" ? "high" : "low",
      };
    }
    const url = required(
      part,
      "image_url",
      `${p}.image_url`,
      string,
      "the image URL (http(s), data URL or svcfile://)",
    );
    return { type: "image", url, param: `${p}.image_url`, detail: detail === "high" ? "high" : "low" };
  });
}
