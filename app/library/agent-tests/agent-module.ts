// The agents a scenario file names by module (`./agent.ts#hotline`): imported as the program that
// runs them would, so their tools and hooks are the real ones. A module imports the package by
// name ("voice-bridge"); in a project that installed it, Node finds it. Where nothing is installed
// (this package's own checkout, whose examples import it by name), the name falls back to the
// package running the tests.
import * as nodeModule from "node:module";
import { extname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { AgentDefinition } from "../define-agent.ts";

const PACKAGE = "voice-bridge";
/** The package's entry beside this file: ../../index.ts in a checkout, ../../index.js installed. */
const OWN_ENTRY = new URL(`../../index${extname(new URL(import.meta.url).pathname)}`, import.meta.url).href;

let hooked = false;

/** Lets `import "voice-bridge"` fall back to this package when it is not installed where the module is. */
function fallBackToThisPackage(): void {
  if (hooked) return;
  hooked = true;
  // Node 22.15+ and 23.5+: elsewhere the package must be installed, as it is in a user's project.
  const register = (nodeModule as { registerHooks?: typeof nodeModule.registerHooks }).registerHooks;
  register?.({
    resolve(specifier, context, next) {
      try {
        return next(specifier, context);
      } catch (err) {
        if (specifier !== PACKAGE || (err as { code?: string }).code !== "ERR_MODULE_NOT_FOUND") throw err;
        return { url: OWN_ENTRY, shortCircuit: true };
      }
    },
  });
}

/** The agent a reference names, from `dir`; throws an Error saying what is missing. */
export async function importAgent(reference: string, dir: string): Promise<AgentDefinition> {
  const hash = reference.indexOf("#");
  const file = resolve(dir, hash < 0 ? reference : reference.slice(0, hash));
  const name = hash < 0 ? "default" : reference.slice(hash + 1);
  fallBackToThisPackage();
  let exports: Record<string, unknown>;
  try {
    exports = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`cannot import ${file}: ${(err as Error).message}`);
  }
  const agent = exports[name];
  if (typeof agent !== "object" || agent === null || Array.isArray(agent)) {
    const names = Object.keys(exports).filter((k) => typeof exports[k] === "object" && exports[k] !== null);
    throw new Error(
      `${file} has no agent exported as "${name}"${names.length ? ` (its exports: ${names.join(", ")})` : ""}`,
    );
  }
  return agent as AgentDefinition;
}
