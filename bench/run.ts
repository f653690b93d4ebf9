// `npm run bench -- NAME [args]` runs bench/NAME.ts, which prints one JSON line of figures;
// `npm run bench -- NAME --help` prints its usage (the comment it opens with).
import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { optionsOf, unknownOptions, usageOfFile } from "./lib/usage.ts";

const here = dirname(fileURLToPath(import.meta.url));
const available = readdirSync(here)
  .filter((f) => f.endsWith(".ts") && f !== "run.ts" && !f.startsWith("_"))
  .map((f) => f.slice(0, -3))
  .sort();

const [name, ...rest] = process.argv.slice(2);
if (!name || name === "--help" || name === "-h") {
  console.log(
    `usage: npm run bench -- NAME [args]   (npm run bench -- NAME --help: its options)\nbenchmarks: ${available.join(", ") || "(none yet)"}`,
  );
  process.exit(name ? 0 : 2);
}
const file = join(here, `${name}.ts`);
if (!existsSync(file)) {
  console.error(`bench: no benchmark "${name}"; available: ${available.join(", ")}`);
  process.exit(2);
}
const usage = usageOfFile(file);
if (rest.includes("--help") || rest.includes("-h")) {
  console.log(usage);
  process.exit(0);
}
const known = optionsOf(usage);
const unknown = unknownOptions(rest, known);
if (unknown.length > 0) {
  const options = [...known].sort().join(" ") || "(none)";
  console.error(
    `bench ${name}: unknown option${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")}; its options: ${options} (npm run bench -- ${name} --help)`,
  );
  process.exit(2);
}
process.argv = [process.argv[0]!, file, ...rest];
await import(file);
