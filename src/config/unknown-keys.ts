// Keys nobody reads are mistakes (`agnet:`, `service.voise:`): without this check a misspelt
// setting silently does nothing. The known keys come from the zod schema itself, walked beside
// the input, so a key added to the schema anywhere is known here without a list to keep.
import type { z } from "zod";

export interface UnknownKey {
  /** Where it is, e.g. ["agents", "sales", "greting"]. */
  path: string[];
  /** The nearest known key at that place, when one is near enough to be a typo. */
  suggestion?: string;
}

// Just enough of zod 4's definitions to walk them.
export interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  options?: z.ZodType[];
  valueType?: z.ZodType;
  element?: z.ZodType;
  catchall?: z.ZodType;
  getter?: () => z.ZodType;
}

export const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The object shapes `schema` can take for an object value (through wrappers, pipes and unions). */
function shapesOf(schema: z.ZodType, depth = 0): Array<Record<string, z.ZodType>> {
  if (depth > 20) return [];
  const d = defOf(schema);
  switch (d.type) {
    case "object":
      // An object that takes any key (catchall) has no unknown keys.
      return d.catchall && defOf(d.catchall).type !== "never" ? [] : [d.shape ?? {}];
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
    case "catch":
    case "readonly":
    case "nonoptional":
      return d.innerType ? shapesOf(d.innerType, depth + 1) : [];
    case "pipe": {
      // preprocess(fn, schema) is a pipe from a transform: the object is the output side's.
      const from = d.in && defOf(d.in).type !== "transform" ? shapesOf(d.in, depth + 1) : [];
      return from.length ? from : d.out ? shapesOf(d.out, depth + 1) : [];
    }
    case "union":
      return (d.options ?? []).flatMap((o) => shapesOf(o, depth + 1));
    case "lazy":
      return d.getter ? shapesOf(d.getter(), depth + 1) : [];
    default:
      return [];
  }
}

/** The schema of each element / value under `schema` (arrays and records), if it has one. */
function childOf(schema: z.ZodType, kind: "array" | "record", depth = 0): z.ZodType | undefined {
  if (depth > 20) return undefined;
  const d = defOf(schema);
  if (kind === "array" && d.type === "array") return d.element;
  if (kind === "record" && d.type === "record") return d.valueType;
  const inner =
    d.innerType ??
    (d.type === "pipe" ? (d.in && defOf(d.in).type !== "transform" ? d.in : d.out) : undefined) ??
    (d.type === "lazy" ? d.getter?.() : undefined);
  if (inner) return childOf(inner, kind, depth + 1);
  if (d.type === "union")
    for (const o of d.options ?? []) {
      const c = childOf(o, kind, depth + 1);
      if (c) return c;
    }
  return undefined;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Every key in `value` that `schema` does not know, with the nearest known key when there is one. */
export function unknownKeys(schema: z.ZodType, value: unknown, path: string[] = []): UnknownKey[] {
  const out: UnknownKey[] = [];
  if (Array.isArray(value)) {
    const element = childOf(schema, "array");
    if (element)
      for (const [i, v] of value.entries()) out.push(...unknownKeys(element, v, [...path, String(i)]));
    return out;
  }
  if (!isPlainObject(value)) return out;
  const shapes = shapesOf(schema);
  if (shapes.length === 0) {
    const values = childOf(schema, "record");
    if (values) for (const [k, v] of Object.entries(value)) out.push(...unknownKeys(values, v, [...path, k]));
    return out;
  }
  const known = new Map<string, z.ZodType>();
  for (const shape of shapes) for (const [k, s] of Object.entries(shape)) if (!known.has(k)) known.set(k, s);
  for (const [k, v] of Object.entries(value)) {
    const child = known.get(k);
    if (child) {
      out.push(...unknownKeys(child, v, [...path, k]));
      continue;
    }
    const suggestion = nearest(k, [...known.keys()]);
    out.push({ path: [...path, k], ...(suggestion ? { suggestion } : {}) });
  }
  return out;
}

/** The message for one unknown key, e.g. `unknown key "agnet" (did you mean "agent"?)`. */
export function unknownKeyMessage(key: UnknownKey, known?: readonly string[]): string {
  const name = key.path[key.path.length - 1];
  if (key.suggestion) return `unknown key "${name}" (did you mean "${key.suggestion}"?)`;
  return known?.length ? `unknown key "${name}" (known here: ${known.join(", ")})` : `unknown key "${name}"`;
}

/** The known key closest to `key` by edit distance, if close enough to be a typo of it. */
export function nearest(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const k of known) {
    const d = k.toLowerCase() === lower ? 0 : distance(lower, k.toLowerCase());
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  const allowed = Math.max(2, Math.floor(key.length / 3));
  return best !== undefined && bestDistance <= allowed ? best : undefined;
}

/** Optimal string alignment distance (a swap of two neighbours counts as one edit: agnet → agent). */
function distance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++)
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  return d[a.length]![b.length]!;
}
