// The CLI's word on configuration, read from the config schema like docs/configuration.md: every
// environment variable with its key, type, default and meaning, and the variable behind a flag,
// so `--help` names no variable the program does not read and leaves none out.
import { Help } from "commander";
import type { z } from "zod";
import { configSchema } from "../src/config/config.ts";
import { defaultText, typeText, unwrap } from "../src/config/describe-key.ts";
import { type EnvVariable, envVariables } from "../src/config/env.ts";

const VARIABLES = envVariables(configSchema);

/** The variable that sets `path` (e.g. "server.host"); asking for a key none sets is a bug here. */
function variableAt(path: string): EnvVariable {
  const found = VARIABLES.find((v) => v.path.join(".") === path);
  if (!found) throw new Error(`no environment variable sets ${path}`);
  return found;
}

/** The name of the environment variable that sets `path`, e.g. HOST for "server.host". */
export function envName(path: string): string {
  return variableAt(path).name;
}

/** A flag's help with the variable it stands in for and the key's default: "… (env HOST, default 0.0.0.0)". */
export function flagHelp(text: string, path: string, opts: { default?: string } = {}): string {
  const variable = variableAt(path);
  const fallback = opts.default ?? plain(defaultText(unwrap(variable.schema)));
  return `${text} (env ${variable.name}${fallback === "—" ? "" : `, default ${fallback}`})`;
}

/** Markdown's code marks are for the reference; a terminal shows the words. */
const plain = (text: string) => text.replaceAll("`", "");

/** The sections that have variables, in the schema's order, each with its variables. */
const BY_SECTION: ReadonlyArray<readonly [string, z.ZodType, EnvVariable[]]> = Object.entries(
  configSchema.shape,
)
  .map(([section, schema]) => [section, schema, VARIABLES.filter((v) => v.path[0] === section)] as const)
  .filter(([, , variables]) => variables.length > 0);

/** Every environment variable, by section of the config file: its key, type, default and meaning. */
export function environmentHelp(width = 80): string {
  const help = new Help();
  const wrap = (text: string, indent: number) =>
    help
      .boxWrap(plain(text), width - indent)
      .split("\n")
      .map((line) => " ".repeat(indent) + line)
      .join("\n");
  const out: string[] = [];
  for (const [section, schema, inSection] of BY_SECTION) {
    out.push("", wrap(`${section}: ${unwrap(schema).meta.description ?? ""}`, 0));
    for (const v of inSection) {
      const u = unwrap(v.schema);
      const fallback = defaultText(u);
      const type = typeText(v.schema);
      // "text" says nothing a reader would not assume.
      const facts = [
        v.path.join("."),
        ...(type === "text" ? [] : [type]),
        ...(u.meta.secret ? ["secret"] : []),
        ...(fallback === "—" ? [] : [`default ${fallback}`]),
      ];
      out.push(wrap(`${v.name} (${facts.join("; ")})`, 2), wrap(u.meta.description ?? "", 6));
    }
  }
  return out.join("\n");
}

/** The variables in brief, a few lines per section: names and defaults, for the program's --help. */
export function environmentSummary(width = 80): string {
  const help = new Help();
  const out: string[] = [];
  const column = Math.max(...BY_SECTION.map(([section]) => section.length)) + 4;
  for (const [section, , inSection] of BY_SECTION) {
    const names = inSection.map((v) => {
      const fallback = defaultText(unwrap(v.schema));
      return fallback === "—" ? v.name : `${v.name} (${plain(fallback)})`;
    });
    const lines = help.boxWrap(names.join(", "), width - column).split("\n");
    out.push(
      ...lines.map((line, i) => `${i === 0 ? `  ${section}`.padEnd(column) : " ".repeat(column)}${line}`),
    );
  }
  return out.join("\n");
}
