// The console page's files (console/ at the top of the project), read once at start-up and
// served from memory: the page is a handful of small static files that need no build.
import { readdirSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";

export interface Asset {
  body: Buffer;
  type: string;
}

export const CONSOLE_DIR = fileURLToPath(new URL("../../console/", import.meta.url));

const TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
};

/** Every servable file of `dir` by name; throws, naming the folder, when it cannot be read. */
export function loadAssets(dir = CONSOLE_DIR): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    throw new Error(`console: cannot read its page's files in ${dir} (${(err as Error).message})`);
  }
  for (const name of names) {
    const type = TYPES[extname(name)];
    if (type) assets.set(name, { body: readFileSync(join(dir, name)), type });
  }
  if (!assets.has("index.html")) throw new Error(`console: ${dir} has no index.html`);
  return assets;
}
