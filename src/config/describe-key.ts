// How a key of the config schema reads to a person: its type ("port number", "`a` or `b`"), its
// default and what its metadata says. The reference (scripts/config-reference.ts writes
// docs/configuration.md) and the CLI's help both describe keys with it, so they say the same; and
// the walk over every object the schema holds, which the reference and the masking of secrets share.
import { z } from "zod";
import { type Def, defOf } from "./unknown-keys.ts";

/** What the reference reads from a schema's metadata beyond the description. */
export interface KeyMeta {
  description?: string;
  /** The type as a person reads it, where the schema's shape cannot say (a transform's input). */
  type?: string;
  /** The object a transform accepts, walked as the key's fields (e.g. sip.registrations[].…). */
  objectForm?: z.ZodType;
  /** The value is a credential: masked by `voice-bridge config`, best kept out of files in git. */
  secret?: boolean;
  /** The environment variable that sets the key (read only on keys reached through objects, see env.ts). */
  env?: string;
}

export interface WalkDef extends Def {
  entries?: Record<string, string | number>;
  values?: unknown[];
  defaultValue?: unknown;
  checks?: Array<{ _zod: { def: { check: string; value?: unknown; inclusive?: boolean } } }>;
}

export const defOfWalk = (s: z.ZodType): WalkDef => defOf(s) as WalkDef;
const metaOf = (s: z.ZodType): KeyMeta | undefined => z.globalRegistry.get(s) as KeyMeta | undefined;

/** A key's schema with its wrappers peeled: the value's own schema, and what the wrappers said. */
export interface Unwrapped {
  core: z.ZodType;
  meta: KeyMeta;
  defaultValue?: { value: unknown };
}

/** True when parsing `s` ends in a transform (its output is not described by a schema). */
function endsInTransform(s: z.ZodType): boolean {
  const d = defOfWalk(s);
  return d.type === "transform" || (d.type === "pipe" && d.out !== undefined && endsInTransform(d.out));
}

export function unwrap(schema: z.ZodType): Unwrapped {
  const meta: KeyMeta = {};
  let defaultValue: { value: unknown } | undefined;
  let s = schema;
  for (let depth = 0; depth < 30; depth++) {
    // The outermost word wins: a key's own description over that of a shared value type.
    const m = metaOf(s);
    if (m) for (const [k, v] of Object.entries(m)) if (!(k in meta)) (meta as Record<string, unknown>)[k] = v;
    const d = defOfWalk(s);
    if (d.type === "default" && !defaultValue) defaultValue = { value: d.defaultValue };
    if (d.innerType) s = d.innerType;
    else if (d.type === "pipe" && d.in && d.out)
      // preprocess(fn, schema), or a transform then a check: the checked side says the type;
      // a check then a transform (`.transform()`): the input side does.
      s = endsInTransform(d.in) ? d.out : d.in;
    else break;
  }
  return { core: s, meta, ...(defaultValue ? { defaultValue } : {}) };
}

export const code = (v: unknown) => `\`${String(v)}\``;

function numberText(d: WalkDef): string {
  const checks = (d.checks ?? []).map((c) => c._zod.def);
  const whole = checks.some((c) => c.check === "number_format");
  const low = checks.find((c) => c.check === "greater_than");
  const high = checks.find((c) => c.check === "less_than");
  if (whole && low?.value === 0 && high?.value === 65535) return "port number";
  const noun = whole ? "whole number" : "number";
  const from = low ? (low.inclusive ? `from ${low.value}` : `above ${low.value}`) : undefined;
  const to = high ? (high.inclusive ? `to ${high.value}` : `below ${high.value}`) : undefined;
  if (from && to) return `${noun} ${from} ${low?.inclusive ? "" : "and "}${to}`.replace("  ", " ");
  if (from) return low?.inclusive ? `${noun}, at least ${low.value}` : `${noun} ${from}`;
  if (to) return high?.inclusive ? `${noun}, at most ${high.value}` : `${noun} ${to}`;
  return noun;
}

function stringText(s: z.ZodType, d: WalkDef): string {
  const format = (d as { format?: string }).format;
  if (format === "url") return (d as { protocol?: RegExp }).protocol ? "http(s) URL" : "URL";
  if (format === "ipv4") return "IPv4 address";
  const min = (s as unknown as { minLength: number | null }).minLength;
  return min !== null && min > 1 ? `text, at least ${min} characters` : "text";
}

/** The type of a value as a person reads it ("port number", "list of strings", "`a`, `b` or `c`"). */
export function typeText(schema: z.ZodType): string {
  const { core, meta } = unwrap(schema);
  if (meta.type) return meta.type;
  const d = defOfWalk(core);
  switch (d.type) {
    case "string":
      return stringText(core, d);
    case "number":
      return numberText(d);
    case "boolean":
      return "true/false";
    case "enum":
      return oneOf(Object.values(d.entries ?? {}).map(code));
    case "literal":
      return (d.values ?? []).map(code).join(", ");
    case "array":
      return d.element ? `list of ${plural(d.element)}` : "list";
    case "record":
      return d.valueType ? `mapping of name → ${typeText(d.valueType)}` : "mapping";
    case "object":
      return "object (keys below)";
    case "union": {
      const options = (d.options ?? []).map((o) => ({
        kind: defOfWalk(unwrap(o).core).type,
        text: typeText(o),
      }));
      // A list the environment gives as one comma-separated string.
      const list = options.find((o) => o.kind === "array");
      if (list && options.every((o) => o.kind === "array" || o.kind === "string")) return list.text;
      const plain = [...new Set(options.filter((o) => o.kind !== "literal").map((o) => o.text))];
      const literals = options.filter((o) => o.kind === "literal").map((o) => o.text);
      return [plain.join(" or "), oneOf(literals)].filter(Boolean).join(", or ");
    }
    case "unknown":
    case "any":
      return "any value";
    default:
      return d.type;
  }
}

function oneOf(values: string[]): string {
  return values.length < 2 ? (values[0] ?? "") : `${values.slice(0, -1).join(", ")} or ${values.at(-1)}`;
}

function plural(element: z.ZodType): string {
  const { core, meta } = unwrap(element);
  if (meta.objectForm) return `${meta.type ?? "objects"} (keys below)`;
  const d = defOfWalk(core);
  if (d.type === "string" && !meta.type) return "strings";
  if (d.type === "object") return "objects (keys below)";
  if (d.type === "enum")
    return Object.values(d.entries ?? {})
      .map(code)
      .join(", ");
  return typeText(element);
}

export function defaultText(u: Unwrapped): string {
  if (!u.defaultValue) return "—";
  const v = u.defaultValue.value;
  if (Array.isArray(v)) return v.length ? code(v.join(", ")) : "none";
  if (typeof v === "object" && v !== null) return Object.keys(v).length ? code(JSON.stringify(v)) : "none";
  return v === undefined ? "—" : code(v);
}

/** The object under a key, if its value is one (after wrappers), and the list/record marks on the way. */
export function childObject(u: Unwrapped): { shape: Record<string, z.ZodType>; suffix: string } | undefined {
  const d = defOfWalk(u.core);
  if (d.type === "object" && d.shape) return { shape: d.shape, suffix: "" };
  if (u.meta.objectForm) {
    const inner = childObject(unwrap(u.meta.objectForm));
    return inner && { shape: inner.shape, suffix: inner.suffix };
  }
  const item = d.type === "array" ? d.element : d.type === "record" ? d.valueType : undefined;
  if (!item) return undefined;
  const inner = childObject(unwrap(item));
  return inner && { shape: inner.shape, suffix: (d.type === "array" ? "[]" : ".<name>") + inner.suffix };
}

export interface ObjectVisit {
  path: string;
  shape: Record<string, z.ZodType>;
}

/** Every object in the schema with its path, in order (an object used in several places appears in each). */
export function objectsOf(
  shape: Record<string, z.ZodType>,
  path = "",
  out: ObjectVisit[] = [],
): ObjectVisit[] {
  out.push({ path, shape });
  for (const [key, schema] of Object.entries(shape)) {
    const child = childObject(unwrap(schema));
    if (child) objectsOf(child.shape, `${path ? `${path}.` : ""}${key}${child.suffix}`, out);
  }
  return out;
}
