// E1 request → canonical request. Every documented field is checked against its range or set;
// fields the spec does not list are ignored (as chat-completions servers do).
import {
  CHAT_RESPONSE_FORMATS,
  IMAGE_DETAILS,
  LIMITS,
  REASONING_FORMATS,
  type ReasoningFormat,
} from "../../../api/types/index.ts";
import { badParam, missingParam, unusable } from "../../errors.ts";
import type {
  ConvMessage,
  GenRequest,
  InputPart,
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
  stringList,
} from "../validate.ts";

export interface ChatCompletionsCall {
  gen: GenRequest;
  n: number;
  stream: boolean;
  reasoningFormat: ReasoningFormat;
}

export function parseChatCompletions(raw: unknown): ChatCompletionsCall {
  const b = asBody(raw);
  const model = chatModel(b.model);
  const messages = parseMessages(required(b, "messages", "messages", array, "an array of messages"));
  const tools = optional(b, "tools", "tools", array)?.map((t, i) => parseTool(t, `tools[${i}]`)) ?? [];
  const effort = optional(b, "reasoning_effort", "reasoning_effort", reasoningEffort(model));
  const responseFormat = optional(b, "response_format", "response_format", object);
  const format = responseFormat
    ? required(
        responseFormat,
        "type",
        "response_format.type",
        oneOf(CHAT_RESPONSE_FORMATS),
        "text or json_object",
      )
    : "text";
  const gen: GenRequest = {
    model,
    messages,
    tools,
    stop: optional(b, "stop", "stop", stringList(16)) ?? [],
    output: format === "json_object" ? { kind: "json" } : { kind: "text" },
  };
  const maxTokens = optional(b, "max_tokens", "max_tokens", number({ min: 1, int: true }));
  if (maxTokens !== undefined) gen.maxTokens = maxTokens;
  const temperature = optional(b, "temperature", "temperature", number(LIMITS.temperature));
  if (temperature !== undefined) gen.temperature = temperature;
  const topP = optional(b, "top_p", "top_p", number({ min: 0, max: 1 }));
  if (topP !== undefined) gen.topP = topP;
  const fp = optional(b, "frequency_penalty", "frequency_penalty", number(LIMITS.frequencyPenalty));
  if (fp !== undefined) gen.frequencyPenalty = fp;
  if (effort !== undefined) gen.reasoning = { effort, emit: true };
  return {
    gen,
    n: optional(b, "n", "n", number({ ...LIMITS.chatN, int: true })) ?? 1,
    stream: optional(b, "stream", "stream", boolean) ?? false,
    reasoningFormat:
      optional(b, "reasoning_format", "reasoning_format", oneOf(REASONING_FORMATS)) ?? "general",
  };
}

function parseTool(v: unknown, param: string): ToolSpec {
  const t = object(v, param);
  required(t, "type", `${param}.type`, oneOf(["function"] as const), '"function"');
  const f = required(t, "function", `${param}.function`, object, "{name, description, parameters}");
  return {
    name: required(f, "name", `${param}.function.name`, toolName, "the function name"),
    description: optional(f, "description", `${param}.function.description`, string) ?? "",
    parameters: toolParameters(f.parameters, `${param}.function.parameters`),
  };
}

const ROLES = ["system", "user", "assistant", "tool"] as const;

function parseMessages(list: unknown[]): ConvMessage[] {
  if (list.length === 0) throw badParam("messages", "must hold at least one message");
  const callIds = new Set<string>();
  return list.map((v, i) => {
    const p = `messages[${i}]`;
    const m = object(v, p);
    const role = required(m, "role", `${p}.role`, oneOf(ROLES), ROLES.join(", "));
    switch (role) {
      case "system":
        return { role, text: textContent(m.content, `${p}.content`, false) };
      case "user":
        return { role, parts: userContent(m.content, `${p}.content`) };
      case "assistant": {
        const toolCalls =
          optional(m, "tool_calls", `${p}.tool_calls`, array)?.map((c, j) =>
            parseToolCall(c, `${p}.tool_calls[${j}]`),
          ) ?? [];
        for (const c of toolCalls) callIds.add(c.id);
        return { role, text: textContent(m.content, `${p}.content`, true), toolCalls };
      }
      case "tool": {
        const callId = required(
          m,
          "tool_call_id",
          `${p}.tool_call_id`,
          string,
          "the id of the tool call answered",
        );
        if (!callIds.has(callId)) {
          throw unusable(
            `${p}.tool_call_id`,
            `${JSON.stringify(callId)} answers no tool call of an earlier assistant message`,
          );
        }
        return { role, callId, content: textContent(m.content, `${p}.content`, false) };
      }
    }
    throw badParam(`${p}.role`, "unknown role");
  });
}

/** A string, or (leniently) an array of text parts; null only where allowed. */
function textContent(v: unknown, param: string, nullable: boolean): string {
  if (v === undefined || v === null) {
    if (nullable) return "";
    throw missingParam(param, "a string");
  }
  if (typeof v === "string") return v;
  if (Array.isArray(v)) {
    return v
      .map((part, i) => {
        const o = object(part, `${param}[${i}]`);
        required(o, "type", `${param}[${i}].type`, oneOf(["text"] as const), '"text"');
        return required(o, "text", `${param}[${i}].text`, string, "the text");
      })
      .join("");
  }
  throw badParam(param, "must be a string", "invalid_type");
}

function parseToolCall(v: unknown, param: string): ToolCallRecord {
  const c = object(v, param);
  if (c.type !== undefined) oneOf(["function"] as const)(c.type, `${param}.type`);
  const f = required(c, "function", `${param}.function`, object, "{name, arguments}");
  return {
    id: required(c, "id", `${param}.id`, string, "the call id"),
    name: required(f, "name", `${param}.function.name`, string, "the function name"),
    arguments: optional(f, "arguments", `${param}.function.arguments`, string) ?? "{}",
  };
}

const PART_TYPES = ["text", "image_url", "video_url", "input_audio"] as const;

function userContent(v: unknown, param: string): InputPart[] {
  if (typeof v === "string") return [{ type: "text", text: v }];
  if (v === undefined || v === null) throw missingParam(param, "a string or an array of content parts");
  const list = array(v, param);
  if (list.length === 0) throw badParam(param, "must hold at least one content part");
  return list.map((item, i) => {
    const p = `${param}[${i}]`;
    const part = object(item, p);
    const type = required(part, "type", `${p}.type`, oneOf(PART_TYPES), PART_TYPES.join(", "));
    switch (type) {
      case "text":
        return { type: "text", text: required(part, "text", `${p}.text`, string, "the text") };
      case "image_url": {
        const iu = urlObject(part.image_url, `${p}.image_url`);
        const detail = optional(iu, "detail", `${p}.image_url.detail`, oneOf(IMAGE_DETAILS)) ?? "low";
        return { type: "image", url: iu.url as string, param: `${p}.image_url.url`, detail };
      }
      case "video_url": {
        const vu = urlObject(part.video_url, `${p}.video_url`);
        return { type: "video", url: vu.url as string, param: `${p}.video_url.url` };
      }
      case "input_audio": {
        const ia = object(part.input_audio, `${p}.input_audio`);
        const data = required(
          ia,
          "data",
          `${p}.input_audio.data`,
          string,
          "a Base64 data URL (data:audio/<mp3|wav>;base64,…)",
        );
        const format = optional(ia, "format", `${p}.input_audio.format`, oneOf(["mp3", "wav"] as const));
        const audio: InputPart = { type: "audio", url: data, param: `${p}.input_audio.data` };
        if (format) audio.format = format;
        return audio;
      }
    }
    throw badParam(`${p}.type`, "unknown part type");
  });
}

function urlObject(v: unknown, param: string): Json {
  if (!isObject(v)) throw missingParam(param, "an object {url}");
  const url = required(v, "url", `${param}.url`, string, "the URL");
  if (url.length === 0) throw badParam(`${param}.url`, "must not be empty");
  return v;
}
