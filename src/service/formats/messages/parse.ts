// E2 request → canonical request. Only the spec's fields are accepted at the top level (others
// are refused, as the spec says they must not be passed); content blocks follow the Anthropic
// shapes: text, image (base64 / url / file source), tool_use, tool_result.
import { LIMITS, MESSAGES_REQUEST_FIELDS } from "../../../api/types/index.ts";
import { ApiError, badParam, unusable } from "../../errors.ts";
import type { ConvMessage, GenRequest, InputPart, OutputFormat, ToolSpec } from "../../generation/request.ts";
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

export interface MessagesCall {
  gen: GenRequest;
  stream: boolean;
}

export function parseMessages(raw: unknown): MessagesCall {
  const b = asBody(raw);
  for (const key of Object.keys(b)) {
    if (!(MESSAGES_REQUEST_FIELDS as readonly string[]).includes(key)) {
      throw new ApiError(400, `${key}: unknown parameter; supported: ${MESSAGES_REQUEST_FIELDS.join(", ")}`, {
        param: key,
        code: "unknown_parameter",
      });
    }
  }
  const model = chatModel(b.model);
  const maxTokens = required(
    b,
    "max_tokens",
    "max_tokens",
    number({ min: 0, minExclusive: true, int: true }),
    "an integer greater than 0",
  );
  const messages: ConvMessage[] = [];
  const system = optional(b, "system", "system", systemText);
  if (system) messages.push({ role: "system", text: system });
  const list = required(b, "messages", "messages", array, "an array of at least one message");
  if (list.length === 0) throw badParam("messages", "must hold at least one message");
  const callIds = new Set<string>();
  list.forEach((m, i) => {
    messages.push(...parseMessage(m, `messages[${i}]`, callIds));
  });
  const tools = optional(b, "tools", "tools", array)?.map((t, i) => parseTool(t, `tools[${i}]`)) ?? [];
  const gen: GenRequest = { model, messages, tools, maxTokens, stop: [], output: { kind: "text" } };
  const oc = optional(b, "output_config", "output_config", object);
  if (oc) {
    for (const key of Object.keys(oc)) {
      if (key !== "effort" && key !== "format") {
        throw new ApiError(400, `output_config.${key}: unknown parameter; supported: effort, format`, {
          param: `output_config.${key}`,
          code: "unknown_parameter",
        });
      }
    }
    const effort = optional(oc, "effort", "output_config.effort", reasoningEffort(model));
    // Messages content blocks have no reasoning block in the spec: reasoning stays internal.
    if (effort) gen.reasoning = { effort, emit: false };
    const format = optional(oc, "format", "output_config.format", outputFormat);
    if (format) gen.output = format;
  }
  const stop = optional(b, "stop_sequences", "stop_sequences", stringList(16));
  if (stop) {
    if (typeof b.stop_sequences === "string") throw badParam("stop_sequences", "must be an array of strings");
    gen.stop = stop;
  }
  const temperature = optional(b, "temperature", "temperature", number(LIMITS.temperature));
  if (temperature !== undefined) gen.temperature = temperature;
  const topP = optional(b, "top_p", "top_p", number({ min: 0, max: 1, minExclusive: true }));
  if (topP !== undefined) gen.topP = topP;
  const topK = optional(b, "top_k", "top_k", number({ ...LIMITS.topK, int: true }));
  if (topK !== undefined) gen.topK = topK;
  return { gen, stream: optional(b, "stream", "stream", boolean) ?? false };
}

function systemText(v: unknown, param: string): string {
  if (typeof v === "string") return v;
  return array(v, param)
    .map((block, i) => {
      const o = object(block, `${param}[${i}]`);
      required(o, "type", `${param}[${i}].type`, oneOf(["text"] as const), '"text"');
      return required(o, "text", `${param}[${i}].text`, string, "the text");
    })
    .join("\n");
}

function outputFormat(v: unknown, param: string): OutputFormat {
  const f = object(v, param);
  required(f, "type", `${param}.type`, oneOf(["json_schema"] as const), '"json_schema"');
  const schema = required(f, "schema", `${param}.schema`, object, "a JSON Schema object");
  return { kind: "json", schema };
}

function parseTool(v: unknown, param: string): ToolSpec {
  const t = object(v, param);
  if (t.type !== undefined && t.type !== "custom") {
    throw badParam(
      `${param}.type`,
      `only custom (function) tools are supported (got ${JSON.stringify(t.type)})`,
    );
  }
  return {
    name: required(t, "name", `${param}.name`, toolName, "the tool name"),
    description: optional(t, "description", `${param}.description`, string) ?? "",
    parameters: toolParameters(
      required(t, "input_schema", `${param}.input_schema`, object, "a JSON Schema object"),
      `${param}.input_schema`,
    ),
  };
}

const BLOCK_TYPES = ["text", "image", "tool_use", "tool_result", "thinking", "redacted_thinking"] as const;

/** One input message; a user message with tool_result blocks yields tool messages first. */
function parseMessage(v: unknown, p: string, callIds: Set<string>): ConvMessage[] {
  const m = object(v, p);
  const role = required(
    m,
    "role",
    `${p}.role`,
    oneOf(["user", "assistant"] as const),
    '"user" or "assistant"',
  );
  const content = m.content;
  if (typeof content === "string") {
    return [
      role === "user"
        ? { role, parts: [{ type: "text", text: content }] }
        : { role, text: content, toolCalls: [] },
    ];
  }
  const blocks = required(m, "content", `${p}.content`, array, "a string or an array of content blocks");
  const out: ConvMessage[] = [];
  const parts: InputPart[] = [];
  let text = "";
  const toolCalls: { id: string; name: string; arguments: string }[] = [];
  blocks.forEach((raw, i) => {
    const bp = `${p}.content[${i}]`;
    const block = object(raw, bp);
    const type = required(block, "type", `${bp}.type`, oneOf(BLOCK_TYPES), BLOCK_TYPES.join(", "));
    if (type === "thinking" || type === "redacted_thinking") return;
    if (type === "text") {
      const t = required(block, "text", `${bp}.text`, string, "the text");
      if (role === "user") parts.push({ type: "text", text: t });
      else text += t;
    } else if (type === "image") {
      if (role !== "user") throw badParam(`${bp}.type`, "image blocks belong in user messages");
      parts.push(imagePart(block, bp));
    } else if (type === "tool_use") {
      if (role !== "assistant") throw badParam(`${bp}.type`, "tool_use blocks belong in assistant messages");
      const id = required(block, "id", `${bp}.id`, string, "the tool use id");
      callIds.add(id);
      toolCalls.push({
        id,
        name: required(block, "name", `${bp}.name`, string, "the tool name"),
        arguments: JSON.stringify(block.input ?? {}),
      });
    } else {
      if (role !== "user") throw badParam(`${bp}.type`, "tool_result blocks belong in user messages");
      const callId = required(
        block,
        "tool_use_id",
        `${bp}.tool_use_id`,
        string,
        "the id of the tool_use answered",
      );
      if (!callIds.has(callId)) {
        throw unusable(
          `${bp}.tool_use_id`,
          `${JSON.stringify(callId)} answers no tool_use of an earlier assistant message`,
        );
      }
      out.push({ role: "tool", callId, content: toolResultText(block.content, `${bp}.content`) });
    }
  });
  if (role === "assistant") out.push({ role, text, toolCalls });
  else if (parts.length > 0) out.push({ role, parts });
  return out;
}

function imagePart(block: Json, bp: string): InputPart {
  const src = required(block, "source", `${bp}.source`, object, "{type: base64 | url | file, …}");
  const type = required(
    src,
    "type",
    `${bp}.source.type`,
    oneOf(["base64", "url", "file"] as const),
    "base64, url or file",
  );
  const param = `${bp}.source`;
  if (type === "base64") {
    const mediaType = required(src, "media_type", `${bp}.source.media_type`, string, "e.g. image/png");
    const data = required(src, "data", `${bp}.source.data`, string, "the Base64 image data");
    return { type: "image", url: `data:${mediaType};base64,${data}`, param, detail: "low" };
  }
  if (type === "url") {
    return {
      type: "image",
      url: required(src, "url", `${bp}.source.url`, string, "the image URL"),
      param,
      detail: "low",
    };
  }
  const id = required(src, "file_id", `${bp}.source.file_id`, string, "a stored file id");
  return { type: "image", url: `svcfile://${id}`, param, detail: "low" };
}

function toolResultText(v: unknown, param: string): string {
  if (v === undefined || v === null) return "";
  if (typeof v === "string") return v;
  return array(v, param)
    .map((b, i) => (isObject(b) && b.type === "text" ? string(b.text, `${param}[${i}].text`) : ""))
    .join("");
}
