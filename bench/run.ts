// `npm run bench -- NAME [args]` runs bench/NAME.ts, which prints one JSON line of figures.
import { existsSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const available = readdirSync(here)
  .filter((f) => f.endsWith(".ts") && f !== "run.ts" && !f.startsWith("_"))
  .map((f) => f.slice(0, -3))
  .sort();

const [name, ...rest] = process.argv.slice(2);
if (!name || name === "--help" || name === "-h") {
  console.log(`usage: npm run bench -- NAME [args]\nbenchmarks: ${available.join(", ") || "(none yet)"}`);
  process.exit(name ? 0 : 2);
}
const file = join(here, `${name}.ts`);
if (!existsSync(file)) {
  console.error(`bench: no benchmark "${name}"; available: ${available.join(", ")}`);
  process.exit(2);
}
process.argv = [process.argv[0]!, file, ...rest];
await import(file);
