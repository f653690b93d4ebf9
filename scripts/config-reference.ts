// Writes docs/configuration.md from the config schema itself (src/config.ts): every key with its
// environment variable, type, default and meaning (the schema's `.meta({ description })`), so the
// reference cannot drift from what the program accepts. test/docs/configuration.test.ts fails when
// the file and the schema differ, or when a key has no description.
//   node scripts/config-reference.ts           rewrite docs/configuration.md
//   node scripts/config-reference.ts --check   exit 1 and name the lines that differ
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { configSchema, ENV_KEYS } from "../src/config/config.ts";
import { type Def, defOf } from "../src/config/unknown-keys.ts";

export const REFERENCE_FILE = fileURLToPath(new URL("../docs/configuration.md", import.meta.url));

/** What the reference reads from a schema's metadata beyond the description. */
interface KeyMeta {
  description?: string;
  /** The type as a person reads it, where the schema's shape cannot say (a transform's input). */
  type?: string;
  /** The object a transform accepts, walked as the key's fields (e.g. sip.registrations[].…). */
  objectForm?: z.ZodType;
  /** The value is a credential: masked by `voice-bridge config`, best kept out of files in git. */
  secret?: boolean;
}

interface WalkDef extends Def {
  entries?: Record<string, string | number>;
  values?: unknown[];
  defaultValue?: unknown;
  checks?: Array<{ _zod: { def: { check: string; value?: unknown; inclusive?: boolean } } }>;
}

const defOfWalk = (s: z.ZodType): WalkDef => defOf(s) as WalkDef;
const metaOf = (s: z.ZodType): KeyMeta | undefined => z.globalRegistry.get(s) as KeyMeta | undefined;

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

/** A key's schema with its wrappers peeled: the value's own schema, and what the wrappers said. */
interface Unwrapped {
  core: z.ZodType;
  meta: KeyMeta;
  defaultValue?: { value: unknown };
}

/** True when parsing `s` ends in a transform (its output is not described by a schema). */
function endsInTransform(s: z.ZodType): boolean {
  const d = defOfWalk(s);
  return d.type === "transform" || (d.type === "pipe" && d.out !== undefined && endsInTransform(d.out));
}

function unwrap(schema: z.ZodType): Unwrapped {
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

const code = (v: unknown) => `\`${String(v)}\``;

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
function typeText(schema: z.ZodType): string {
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

function defaultText(u: Unwrapped): string {
  if (!u.defaultValue) return "—";
  const v = u.defaultValue.value;
  if (Array.isArray(v)) return v.length ? code(v.join(", ")) : "none";
  if (typeof v === "object" && v !== null) return Object.keys(v).length ? code(JSON.stringify(v)) : "none";
  return v === undefined ? "—" : code(v);
}

/** The object under a key, if its value is one (after wrappers), and the list/record marks on the way. */
function childObject(u: Unwrapped): { shape: Record<string, z.ZodType>; suffix: string } | undefined {
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

interface Visit {
  path: string;
  shape: Record<string, z.ZodType>;
}

/** Every object in the schema with its path, in order (an object used in several places appears in each). */
function objects(shape: Record<string, z.ZodType>, path: string, out: Visit[]): Visit[] {
  out.push({ path, shape });
  for (const [key, schema] of Object.entries(shape)) {
    const child = childObject(unwrap(schema));
    if (child) objects(child.shape, `${path ? `${path}.` : ""}${key}${child.suffix}`, out);
  }
  return out;
}

const depth = (path: string) => path.split(/\.|\[\]/).length;

/**
 * Where each object's keys are listed in full: the shortest path at which its fields appear.
 * Elsewhere (`agents.<name>` beside `agent`, a route's agentWebhook) one row points there.
 */
function homes(visits: Visit[]): Homes {
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
  const home = homes(objects(schema.shape, "", []));
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

<!-- Generated from the config schema (src/config.ts) by \`node scripts/config-reference.ts\`: edit the
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
