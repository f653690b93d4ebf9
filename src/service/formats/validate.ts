// Small readers for request bodies: each checks one field against its documented type and range
// and throws a 400 naming the field (as a dotted path) and what is allowed.
import { isObject, type JsonObject } from "../../core/guards.ts";
import { badParam, missingParam } from "../errors.ts";

export type Json = JsonObject;

// The readers' own guard is core's, given here with them.
export { isObject };

const describe = (v: unknown): string =>
  v === null
    ? "null"
    : Array.isArray(v)
      ? "an array"
      : typeof v === "string"
        ? `"${v.slice(0, 40)}"`
        : typeof v;

export function body(v: unknown): Json {
  if (!isObject(v)) throw badParam("body", "the request body must be a JSON object", "invalid_body");
  return v;
}

export function object(v: unknown, param: string): Json {
  if (!isObject(v)) throw badParam(param, `must be an object (got ${describe(v)})`, "invalid_type");
  return v;
}

export function array(v: unknown, param: string): unknown[] {
  if (!Array.isArray(v)) throw badParam(param, `must be an array (got ${describe(v)})`, "invalid_type");
  return v;
}

export function string(v: unknown, param: string): string {
  if (typeof v !== "string") throw badParam(param, `must be a string (got ${describe(v)})`, "invalid_type");
  return v;
}

export function required<T>(
  o: Json,
  key: string,
  param: string,
  read: (v: unknown, p: string) => T,
  what: string,
): T {
  if (o[key] === undefined || o[key] === null) throw missingParam(param, what);
  return read(o[key], param);
}

export function optional<T>(
  o: Json,
  key: string,
  param: string,
  read: (v: unknown, p: string) => T,
): T | undefined {
  return o[key] === undefined || o[key] === null ? undefined : read(o[key], param);
}

export interface NumberRule {
  min?: number;
  max?: number;
  /** min is exclusive ("greater than"). */
  minExclusive?: boolean;
  int?: boolean;
}

export function number(rule: NumberRule): (v: unknown, param: string) => number {
  return (v, param) => {
    const range = rangeText(rule);
    if (typeof v !== "number" || !Number.isFinite(v) || (rule.int && !Number.isInteger(v))) {
      throw badParam(
        param,
        `must be ${rule.int ? "an integer" : "a number"}${range} (got ${describe(v)})`,
        "invalid_type",
      );
    }
    const low = rule.min !== undefined && (rule.minExclusive ? v <= rule.min : v < rule.min);
    const high = rule.max !== undefined && v > rule.max;
    if (low || high)
      throw badParam(param, `must be ${rule.int ? "an integer" : "a number"}${range} (got ${v})`);
    return v;
  };
}

function rangeText(r: NumberRule): string {
  if (r.min !== undefined && r.max !== undefined) {
    return r.minExclusive ? ` greater than ${r.min} and at most ${r.max}` : ` from ${r.min} to ${r.max}`;
  }
  if (r.min !== undefined) return r.minExclusive ? ` greater than ${r.min}` : ` of at least ${r.min}`;
  if (r.max !== undefined) return ` of at most ${r.max}`;
  return "";
}

export function boolean(v: unknown, param: string): boolean {
  if (typeof v !== "boolean")
    throw badParam(param, `must be true or false (got ${describe(v)})`, "invalid_type");
  return v;
}

export function oneOf<T extends string>(values: readonly T[]): (v: unknown, param: string) => T {
  return (v, param) => {
    if (typeof v !== "string" || !(values as readonly string[]).includes(v)) {
      throw badParam(param, `must be one of ${values.map((x) => `"${x}"`).join(", ")} (got ${describe(v)})`);
    }
    return v as T;
  };
}

/** A string or an array of strings, as E1 `stop` takes; empty strings are refused. */
export function stringList(max: number): (v: unknown, param: string) => string[] {
  return (v, param) => {
    const list = typeof v === "string" ? [v] : array(v, param);
    if (list.length > max) throw badParam(param, `at most ${max} entries (got ${list.length})`);
    return list.map((s, i) => {
      const item = string(s, `${param}[${i}]`);
      if (item.length === 0) throw badParam(`${param}[${i}]`, "must not be empty");
      return item;
    });
  };
}
