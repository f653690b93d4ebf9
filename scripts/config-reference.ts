// Writes docs/configuration.md from the config schema itself (src/config/): every key with its
// environment variable, type, default and meaning (the schema's `.meta({ description })`), so the
// reference cannot drift from what the program accepts. test/docs/configuration.test.ts fails when
// the file and the schema differ, or when a key has no description.
//   node scripts/config-reference.ts           rewrite docs/configuration.md
//   node scripts/config-reference.ts --check   exit 1 and name the lines that differ
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { z } from "zod";
import { configSchema, ENV_KEYS } from "../src/config/config.ts";
import {
  childObject,
  code,
  defaultText,
  type ObjectVisit,
  objectsOf,
  typeText,
  unwrap,
} from "../src/config/describe-key.ts";

export const REFERENCE_FILE = fileURLToPath(new URL("../docs/configuration.md", import.meta.url));

/** One key of the reference. */
export interface ReferenceRow {
  /** Dotted path; `<name>` for a record's entries, `[]` for a list's items. */
  path: string;
  section: string;
  env: string[];
  type: string;
  default: string;
  description: string | undefined;
}

const depth = (path: string) => path.split(/\.|\[\]/).length;

/**
 * Where each object's keys are listed in full: the shortest path at which its fields appear.
 * Elsewhere (`agents.<name>` beside `agent`, a route's agentWebhook) one row points there.
 */
function homes(visits: ObjectVisit[]): Homes {
  const home = new Map<z.ZodType, string>();
  const shapeAt = new Map<string, Record<string, z.ZodType>>();
  for (const v of [...visits].sort((a, b) => depth(a.path) - depth(b.path))) {
    for (const field of Object.values(v.shape)) if (!home.has(field)) home.set(field, v.path);
    if (!shapeAt.has(v.path)) shapeAt.set(v.path, v.shape);
  }
  return { home, shapeAt };
}

interface Homes {
  home: Map<z.ZodType, string>;
  shapeAt: Map<string, Record<string, z.ZodType>>;
}

/** The rows of the reference for `schema` (an object whose keys are the sections). */
export function referenceRows(
  schema: z.ZodObject = configSchema,
  envKeys: Readonly<Record<string, readonly string[]>> = ENV_KEYS,
): ReferenceRow[] {
  const envOf = new Map<string, string[]>();
  for (const [name, path] of Object.entries(envKeys)) {
    const key = path.join(".");
    envOf.set(key, [...(envOf.get(key) ?? []), name]);
  }
  const home = homes(objectsOf(schema.shape));
  const rows: ReferenceRow[] = [];
  const visit = (shape: Record<string, z.ZodType>, prefix: string, section: string) => {
    for (const [key, field] of Object.entries(shape)) {
      const path = prefix ? `${prefix}.${key}` : key;
      const u = unwrap(field);
      const child = childObject(u);
      const childPath = child ? `${path}${child.suffix}` : path;
      const elsewhere = child && sameKeysAs(child.shape, childPath, home);
      const type = elsewhere
        ? `${typeText(field).replace(" (keys below)", "")}: the keys of \`${elsewhere.path}\`${
            elsewhere.missing.length ? ` except ${elsewhere.missing.map(code).join(", ")}` : ""
          }`
        : typeText(field) + (u.meta.secret ? " (secret)" : "");
      rows.push({
        path,
        section: section || key,
        env: envOf.get(path) ?? [],
        type,
        default: defaultText(u),
        description: u.meta.description,
      });
      if (child && !elsewhere) visit(child.shape, childPath, section || key);
    }
  };
  visit(schema.shape, "", "");
  return rows;
}

/** When every field of `shape` is listed at another path, that path and the fields it has beyond. */
function sameKeysAs(
  shape: Record<string, z.ZodType>,
  path: string,
  { home, shapeAt }: Homes,
): { path: string; missing: string[] } | undefined {
  const places = new Set(Object.values(shape).map((f) => home.get(f)));
  const [place] = places;
  if (places.size !== 1 || place === undefined || place === path) return undefined;
  return { path: place, missing: Object.keys(shapeAt.get(place) ?? {}).filter((k) => !(k in shape)) };
}

/** Keys without a description (each must say what it means). */
export function undescribedKeys(schema: z.ZodObject = configSchema): string[] {
  return referenceRows(schema, {})
    .filter((r) => !r.description?.trim())
    .map((r) => r.path);
}

/** Markdown for one table cell: pipes escaped, `<` outside code kept from reading as HTML. */
function cell(text: string): string {
  return text
    .split("`")
    .map((part, i) => (i % 2 ? part : part.replace(/</g, "&lt;")))
    .join("`")
    .replace(/\|/g, "\\|")
    .replace(/\s*\n\s*/g, " ");
}

const INTRO = `# Configuration reference

<!-- Generated from the config schema (src/config/) by \`node scripts/config-reference.ts\`: edit the
schema's descriptions, not this file. test/docs/configuration.test.ts fails when they differ. -->

Every setting of the bridge, by section. A setting comes from, lowest precedence first:

1. its default (the table's **default** column; "—" means unset, and the meaning says what unset does);
2. the config file, YAML or JSON (by its \`.json\` name): \`voice-bridge --config FILE\` or
   \`VOICE_BRIDGE_CONFIG=FILE\`; with the TypeScript API, the options of \`createBridge\` take its place;
3. environment variables (the **environment** column); an empty variable counts as unset;
4. command-line flags (\`voice-bridge start --host --port --shards\`).

Everything is checked at start-up and on reload: a bad value or an unknown key (a typo is named with
the nearest known key) stops the program with a message naming the key and where it was set.
\`voice-bridge config\` prints the resolved configuration as JSON, secrets masked.

In the environment, true/false also read as yes/no, on/off and 1/0, and lists are comma-separated
(\`sip.registrations\`: separated by spaces). \`AGENT_*\` variables set the default agent, under
\`agent:\` or \`agents.default\`, wherever the file writes it. \`agents.<name>\` stands for any agent's
name, \`routes[]\` for each item of a list.

**Secrets**: keys whose type says *(secret)* hold API keys, tokens, signing secrets or passwords. Give
them as environment variables (or in a file only the bridge's user can read), not in a config file
kept in git.
`;

/** The whole of docs/configuration.md. */
export function renderReference(rows: ReferenceRow[] = referenceRows()): string {
  const sections = [...new Set(rows.map((r) => r.section))];
  const out = [INTRO];
  out.push("Sections: " + sections.map((s) => `[\`${s}\`](#${s.toLowerCase()})`).join(", ") + ".\n");
  for (const section of sections) {
    const [head, ...keys] = rows.filter((r) => r.section === section);
    out.push(`## ${section}\n`);
    // A section that is an object is the heading; one that is a list or mapping is a key itself.
    const isKey = head !== undefined && !head.type.startsWith("object");
    if (head?.description && !isKey) out.push(`${cell(head.description)}\n`);
    const body = isKey ? [head, ...keys] : keys;
    out.push("| key | environment | type | default | meaning |", "| --- | --- | --- | --- | --- |");
    for (const r of body)
      out.push(
        `| ${code(r.path)} | ${r.env.map(code).join(", ") || "—"} | ${cell(r.type)} | ${cell(r.default)} | ${cell(r.description ?? "")} |`,
      );
    out.push("");
  }
  return out.join("\n");
}

/** Lines where `actual` and `expected` differ, numbered from 1 (at most `limit`). */
export function differingLines(actual: string, expected: string, limit = 20): string[] {
  const a = actual.split("\n");
  const e = expected.split("\n");
  const out: string[] = [];
  for (let i = 0; i < Math.max(a.length, e.length) && out.length < limit; i++)
    if (a[i] !== e[i])
      out.push(`line ${i + 1}:\n  file:   ${a[i] ?? "(missing)"}\n  schema: ${e[i] ?? "(missing)"}`);
  return out;
}

function main(args: string[]): number {
  const expected = renderReference();
  if (args.includes("--check")) {
    let actual = "";
    try {
      actual = readFileSync(REFERENCE_FILE, "utf8");
    } catch {
      console.error(`${REFERENCE_FILE} is missing: run node scripts/config-reference.ts`);
      return 1;
    }
    const diff = differingLines(actual, expected);
    if (diff.length === 0) return 0;
    console.error(
      `docs/configuration.md differs from the config schema (run node scripts/config-reference.ts):\n${diff.join("\n")}`,
    );
    return 1;
  }
  writeFileSync(REFERENCE_FILE, expected);
  console.log(`wrote ${REFERENCE_FILE}`);
  return 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1])
  process.exitCode = main(process.argv.slice(2));
