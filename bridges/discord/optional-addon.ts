// Discord's native addons (native/discord/, built by native/build.sh) are optional: a process
// without them (the set-up not run, another platform) takes the JavaScript path each one replaces.
import { createRequire } from "node:module";

/** The addon `native/build/<file>`, or undefined when it is not there or does not load. */
export function optionalAddon<T>(file: string): T | undefined {
  try {
    return createRequire(import.meta.url)(`../../native/build/${file}`) as T;
  } catch {
    return undefined;
  }
}
