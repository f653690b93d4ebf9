// API keys and accounts. Each accepted key is its own account: the account id is derived from a hash
// of the key, so stored data never holds a key and the same key finds its data again after a restart.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import type { IncomingHttpHeaders } from "node:http";
import { join } from "node:path";
import { unauthorized } from "./errors.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** The caller's account id, set by the auth hook before any route handler runs. */
    account: string;
  }
}

export const DEV_KEY_FILE = "dev-api-key";

export interface ApiKeys {
  keys: string[];
  /** True when no key was configured and the dev key in the data dir is used. */
  devKey: boolean;
}

/** Configured keys, or else the data dir's dev key (created on first use, mode 0600). */
export function resolveApiKeys(dataDir: string, configured: readonly string[]): ApiKeys {
  const keys = configured.map((k) => k.trim()).filter(Boolean);
  if (keys.length > 0) return { keys: [...new Set(keys)], devKey: false };
  const file = join(dataDir, DEV_KEY_FILE);
  try {
    const existing = readFileSync(file, "utf8").trim();
    if (existing) return { keys: [existing], devKey: true };
  } catch {
    // no dev key yet
  }
  mkdirSync(dataDir, { recursive: true });
  const key = `sk-local-${randomBytes(24).toString("base64url")}`;
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return { keys: [key], devKey: true };
}

function digest(key: string): Buffer {
  return createHash("sha256").update(key).digest();
}

export function accountIdOf(key: string): string {
  return `acct_${digest(key).toString("hex").slice(0, 24)}`;
}

export class Accounts {
  private readonly byDigest = new Map<string, string>();

  constructor(keys: readonly string[]) {
    for (const key of keys) this.byDigest.set(digest(key).toString("hex"), accountIdOf(key));
  }

  /** The account of a bearer key, or undefined. Compares digests, so timing reveals nothing of a key. */
  lookup(key: string): string | undefined {
    const d = digest(key);
    for (const [hex, account] of this.byDigest) {
      if (timingSafeEqual(Buffer.from(hex, "hex"), d)) return account;
    }
    return undefined;
  }

  /** The account of an `Authorization: Bearer <key>` header; throws a 401 ApiError otherwise. */
  authenticate(headers: IncomingHttpHeaders): string {
    const header = headers.authorization;
    if (!header) throw unauthorized("missing Authorization header: send 'Authorization: Bearer <API key>'");
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!m) throw unauthorized("malformed Authorization header: expected 'Bearer <API key>'");
    const account = this.lookup(m[1]!);
    if (!account) throw unauthorized("invalid API key");
    return account;
  }
}
