// What `voice-bridge config` must never print: every key the schema marks `secret` (API keys,
// tokens, passwords, signing secrets), found by walking the schema, so a credential added to any
// section is masked without a list to keep. A hand-kept list had already missed the SIP passwords.
import { z } from "zod";
import { type Def, defOf } from "./unknown-keys.ts";

const MASK = "***";

/** The names of the keys marked secret anywhere in `schema` (e.g. "apiKey", "password"). */
export function secretKeyNames(schema: z.ZodType): Set<string> {
  const names = new Set<string>();
  const seen = new Set<z.ZodType>();
  const visit = (s: z.ZodType | undefined, key?: string) => {
    if (!s || seen.has(s)) return;
    seen.add(s);
    const meta = z.globalRegistry.get(s) as { secret?: boolean; objectForm?: z.ZodType } | undefined;
    if (key && meta?.secret) names.add(key);
    visit(meta?.objectForm, key);
    const d: Def & { left?: z.ZodType; right?: z.ZodType } = defOf(s);
    for (const [k, field] of Object.entries(d.shape ?? {})) visit(field, k);
    for (const inner of [d.innerType, d.in, d.out, d.element, d.valueType, d.left, d.right, d.getter?.()])
      visit(inner, key);
    for (const o of d.options ?? []) visit(o, key);
  };
  visit(schema);
  return names;
}

/** A copy of `value` with every secret key's value masked; a database URL keeps all but its password. */
export function maskSecrets<T>(value: T, secretKeys: ReadonlySet<string>): T {
  const mask = (v: unknown, key?: string): unknown => {
    if (key !== undefined && secretKeys.has(key) && v !== undefined && v !== null) {
      if (typeof v === "string" && /^[a-z][a-z0-9+.-]*:\/\//i.test(v))
        return v.replace(/:[^:@/]*@/, `:${MASK}@`);
      // A list of accounts keeps its names: each entry's own secret keys are masked below.
      if (Array.isArray(v))
        return v.map((item) => (typeof item === "object" && item !== null ? mask(item) : MASK));
      if (typeof v !== "object") return MASK;
    }
    if (Array.isArray(v)) return v.map((item) => mask(item));
    if (typeof v === "object" && v !== null)
      return Object.fromEntries(Object.entries(v).map(([k, inner]) => [k, mask(inner, k)]));
    return v;
  };
  return mask(value) as T;
}
