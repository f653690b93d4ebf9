// What `voice-bridge config` must never print: every key the schema marks `secret` (API keys,
// tokens, passwords, signing secrets), found by walking the schema, so a credential added to any
// section is masked without a list to keep. A hand-kept list had already missed the SIP passwords.
import type { z } from "zod";
import { objectsOf, unwrap } from "./describe-key.ts";

const MASK = "***";

/** The names of the keys marked secret anywhere in `schema`'s objects (e.g. "apiKey", "password"). */
export function secretKeyNames(schema: z.ZodObject): Set<string> {
  const names = new Set<string>();
  for (const { shape } of objectsOf(schema.shape))
    for (const [key, field] of Object.entries(shape)) if (unwrap(field).meta.secret) names.add(key);
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
      // A mapping of secrets (headers, a program's environment) keeps its names, not its values.
      if (typeof v === "object") return Object.fromEntries(Object.keys(v).map((k) => [k, MASK]));
      return MASK;
    }
    if (Array.isArray(v)) return v.map((item) => mask(item));
    if (typeof v === "object" && v !== null)
      return Object.fromEntries(Object.entries(v).map(([k, inner]) => [k, mask(inner, k)]));
    return v;
  };
  return mask(value) as T;
}
