// The bridge's token (see access.ts), closed by default: `server.token` / BRIDGE_TOKEN when set;
// otherwise a random one made at first start and kept in `<dataDir>/bridge-token` (mode 600), so
// that it stays the same across restarts and programs on the same machine (the simulator, the
// benchmarks) read it from there. `off` opens the bridge on purpose.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

export const TOKEN_FILE = "bridge-token";
/** `BRIDGE_TOKEN=off`: no token asked, on purpose. */
export const TOKEN_OFF = "off";

export interface BridgeToken {
  /** undefined: open (`off`). */
  token: string | undefined;
  source: "config" | "stored" | "generated" | "off";
  /** The file it is kept in (stored or generated). */
  path?: string;
}

export function tokenPath(dataDir: string): string {
  return join(dataDir, TOKEN_FILE);
}

/** The token the bridge asks for, making and keeping one when none is configured. */
export async function resolveBridgeToken(
  configured: string | undefined,
  dataDir: string,
): Promise<BridgeToken> {
  if (configured === TOKEN_OFF) return { token: undefined, source: "off" };
  if (configured !== undefined) return { token: configured, source: "config" };
  const path = tokenPath(dataDir);
  const stored = await readFile(path, "utf8").then(
    (t) => t.trim(),
    (err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return undefined;
      throw new Error(`bridge token: cannot read ${path}: ${err.message}`);
    },
  );
  if (stored) return { token: stored, source: "stored", path };
  await mkdir(dataDir, { recursive: true });
  const token = randomBytes(24).toString("base64url");
  try {
    // `wx`: a second bridge starting on the same data dir at the same moment keeps the first's token.
    await writeFile(path, `${token}\n`, { mode: 0o600, flag: "wx" });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return resolveBridgeToken(undefined, dataDir);
    throw new Error(`bridge token: cannot write ${path}: ${(err as Error).message}`);
  }
  await chmod(path, 0o600);
  return { token, source: "generated", path };
}

/**
 * The token a program on this machine sends to the bridge (CLI start-up, not a call path): the
 * configured one, else the one the bridge keeps in its data dir; undefined when it is `off` or
 * the bridge has not made one yet.
 */
export function programToken(configured: string | undefined, dataDir: string): string | undefined {
  if (configured === TOKEN_OFF) return undefined;
  if (configured !== undefined) return configured;
  try {
    return readFileSync(tokenPath(dataDir), "utf8").trim() || undefined;
  } catch {
    return undefined;
  }
}
