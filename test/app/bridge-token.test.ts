import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { programToken, resolveBridgeToken } from "../../app/bridge-token.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), "bridge-token-"));
  dirs.push(d);
  return join(d, "data");
};

describe("the bridge's token", () => {
  it("is made once, kept with mode 600, and read back by the next start and by programs", async () => {
    const dir = tempDir();
    expect(programToken(undefined, dir)).toBeUndefined();
    const made = await resolveBridgeToken(undefined, dir);
    expect(made.source).toBe("generated");
    expect(statSync(made.path!).mode & 0o777).toBe(0o600);
    const again = await resolveBridgeToken(undefined, dir);
    expect(again).toEqual({ token: made.token, source: "stored", path: made.path });
    expect(programToken(undefined, dir)).toBe(made.token);
  });

  it("two bridges starting together on one data dir agree on one token", async () => {
    const dir = tempDir();
    const both = await Promise.all([resolveBridgeToken(undefined, dir), resolveBridgeToken(undefined, dir)]);
    expect(both[0].token).toBe(both[1].token);
  });

  it("takes a configured token as is, and `off` as no token", async () => {
    const dir = tempDir();
    expect(await resolveBridgeToken("configured-token-0123", dir)).toEqual({
      token: "configured-token-0123",
      source: "config",
    });
    expect(await resolveBridgeToken("off", dir)).toEqual({ token: undefined, source: "off" });
    expect(programToken("off", dir)).toBeUndefined();
    expect(programToken("configured-token-0123", dir)).toBe("configured-token-0123");
  });
});
