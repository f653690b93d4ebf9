// Checks shared by the three formats' tool definitions: names of letters, digits, `_` and `-`
// (at most 64 characters), and an object schema whose property types are the documented ones.
import { LIMITS, TOOL_NAME_PATTERN, TOOL_PARAM_TYPES } from "../../api/types/index.ts";
import { badParam } from "../errors.ts";
import { isObject, type Json } from "./validate.ts";

export function toolName(v: unknown, param: string): string {
  if (typeof v !== "string" || v.length === 0) throw badParam(param, "must be a non-empty string");
  if (!TOOL_NAME_PATTERN.test(v))
    throw badParam(param, `may contain only letters, digits, _ and - (got ${JSON.stringify(v)})`);
  if (v.length > LIMITS.toolNameRecommendedMaxChars) {
    throw badParam(
      param,
      `must be at most ${LIMITS.toolNameRecommendedMaxChars} characters (got ${v.length})`,
    );
  }
  return v;
}

/** An object JSON Schema for tool arguments; absent → an empty object schema. */
export function toolParameters(v: unknown, param: string): Json {
  if (v === undefined || v === null) return { type: "object", properties: {} };
  if (!isObject(v)) throw badParam(param, "must be a JSON Schema object");
  if (v.type !== undefined && v.type !== "object")
    throw badParam(`${param}.type`, `must be "object" (got ${JSON.stringify(v.type)})`);
  const props = v.properties;
  if (props !== undefined) {
    if (!isObject(props)) throw badParam(`${param}.properties`, "must be an object of property schemas");
    for (const [name, schema] of Object.entries(props)) {
      const p = `${param}.properties.${name}`;
      if (!isObject(schema)) throw badParam(p, "must be a schema object");
      const types = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type];
      for (const t of types) {
        if (t !== "null" && !(TOOL_PARAM_TYPES as readonly unknown[]).includes(t)) {
          throw badParam(
            `${p}.type`,
            `must be one of ${TOOL_PARAM_TYPES.join(", ")} (got ${JSON.stringify(t)})`,
          );
        }
      }
    }
  }
  return { ...v, type: "object" };
}
