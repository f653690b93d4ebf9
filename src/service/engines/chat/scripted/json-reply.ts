// JSON mode for the scripted agent: the reply as a JSON object, shaped by the caller's JSON Schema
// when one is given (every required property present, with a value of the declared type).

type Schema = Record<string, unknown>;

export function jsonReply(text: string, schema?: Schema): string {
  if (schema?.type !== "object" || typeof schema.properties !== "object") {
    return JSON.stringify({ reply: text });
  }
  return JSON.stringify(fromSchema(schema, text, { used: false }));
}

/** A value for `schema`; the first string slot gets the reply text, the rest neutral values. */
function fromSchema(schema: Schema, text: string, state: { used: boolean }): unknown {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if ("const" in schema) return schema.const;
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "object": {
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      const out: Record<string, unknown> = {};
      for (const [k, s] of Object.entries(props)) out[k] = fromSchema(s, text, state);
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
      if (state.used) return "";
      state.used = true;
      return text;
  }
}
