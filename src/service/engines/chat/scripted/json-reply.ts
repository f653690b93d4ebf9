// JSON mode for the scripted agent: the reply as a JSON object, shaped by a JSON Schema when one
// is given — by the request (Responses `json_schema`), or, as a real model would read it, in a
// ```json block of the system prompt (chat completions' `json_object` mode carries no schema).
// Every property gets a value of its declared type: a `summary` string a summary of the
// conversation, an enum the first of its values the conversation mentions (else its first), the
// first other string slot the reply text, the rest neutral values.

type Schema = Record<string, unknown>;

export interface JsonContext {
  /** The reply the agent decided on. */
  text: string;
  /** What was said in the conversation (the caller's words), for summaries and enum choices. */
  conversation?: string;
}

export function jsonReply(ctx: JsonContext | string, schema?: Schema): string {
  const c = typeof ctx === "string" ? { text: ctx } : ctx;
  if (schema?.type !== "object" || typeof schema.properties !== "object") {
    return JSON.stringify({ reply: c.text });
  }
  return JSON.stringify(fromSchema(schema, c, { used: false }, undefined));
}

/** The first JSON Schema (an object type) in a ```json block of these texts, if any. */
export function schemaInPrompt(texts: readonly string[]): Schema | undefined {
  for (const text of texts)
    for (const m of text.matchAll(/```json\s*\n([\s\S]*?)```/g)) {
      try {
        const v: unknown = JSON.parse(m[1]!);
        if (typeof v === "object" && v !== null && (v as Schema).type === "object") return v as Schema;
      } catch {
        // not JSON: read on
      }
    }
  return undefined;
}

/** A few sentences of the conversation: its first lines, as said (an extractive summary). */
function summaryOf(conversation: string | undefined): string {
  const words = (conversation ?? "").replace(/\s+/g, " ").trim().split(" ").filter(Boolean);
  if (words.length === 0) return "Nothing was said on the call.";
  const head = words.slice(0, 40).join(" ");
  return `The conversation: ${head}${words.length > 40 ? " …" : ""}`;
}

function fromSchema(
  schema: Schema,
  c: JsonContext,
  state: { used: boolean },
  key: string | undefined,
): unknown {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    const said = (c.conversation ?? "").toLowerCase();
    const mentioned = schema.enum.find((v) => typeof v === "string" && said.includes(v.toLowerCase()));
    return mentioned ?? schema.enum[0];
  }
  if ("const" in schema) return schema.const;
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "object": {
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      const out: Record<string, unknown> = {};
      for (const [k, s] of Object.entries(props)) out[k] = fromSchema(s, c, state, k);
      return out;
    }
    case "array":
      return [];
    case "integer":
    case "number":
      return typeof schema.minimum === "number" ? schema.minimum : 0;
    case "boolean":
      return false;
    case "null":
      return null;
    default:
      if (key === "summary") return summaryOf(c.conversation);
      if (state.used) return "";
      state.used = true;
      return c.text;
  }
}
