// Environment variables are declared where their key is (`.meta({ env: "LOG_LEVEL" })` in the
// section's schema) and collected here by walking the schema, so the table loadConfig reads, the
// reference (docs/configuration.md) and the CLI's help cannot drift apart or miss a variable.
import type { z } from "zod";
import { defOfWalk, unwrap } from "./describe-key.ts";

declare module "zod" {
  interface GlobalMeta {
    /** The environment variable that sets this key (see envVariables for where it counts). */
    env?: string;
  }
}

export interface EnvVariable {
  name: string;
  /** The config path it sets, e.g. ["log", "level"]. */
  path: readonly string[];
  /** The key's schema (for its type, default and description). */
  schema: z.ZodType;
}

/**
 * The variables declared in `schema`, in its order. Only keys reached through objects count: an
 * agent's settings declare the `AGENT_*` names once for the `agent:` block, and the same schema
 * under `agents.<name>` (a record) or in a list item sets nothing from the environment.
 */
export function envVariables(schema: z.ZodType, path: readonly string[] = []): EnvVariable[] {
  const d = defOfWalk(unwrap(schema).core);
  if (d.type !== "object" || !d.shape) return [];
  const out: EnvVariable[] = [];
  for (const [key, field] of Object.entries(d.shape)) {
    const at = [...path, key];
    const name = unwrap(field).meta.env;
    if (name) out.push({ name, path: at, schema: field });
    out.push(...envVariables(field, at));
  }
  return out;
}

/** Each variable's config path, by name; a name declared twice is a mistake in the schema. */
export function envTable(variables: readonly EnvVariable[]): Readonly<Record<string, readonly string[]>> {
  const table: Record<string, readonly string[]> = {};
  for (const v of variables) {
    const other = table[v.name];
    if (other)
      throw new Error(
        `environment variable ${v.name} is declared twice: ${other.join(".")} and ${v.path.join(".")}`,
      );
    table[v.name] = v.path;
  }
  return table;
}
