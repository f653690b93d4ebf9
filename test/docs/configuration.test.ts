// The configuration reference is generated from the schema: these fail when docs/configuration.md is
// stale, or when a key (added later, by anyone) has no description to put in it.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  differingLines,
  REFERENCE_FILE,
  referenceRows,
  renderReference,
  undescribedKeys,
} from "../../scripts/config-reference.ts";
import { ENV_KEYS } from "../../src/config/config.ts";

describe("docs/configuration.md", () => {
  it("is what the config schema generates", () => {
    const diff = differingLines(readFileSync(REFERENCE_FILE, "utf8"), renderReference());
    expect(
      diff,
      `docs/configuration.md differs from the config schema: run node scripts/config-reference.ts\n${diff.join("\n")}`,
    ).toEqual([]);
  });

  it("gives every key of the schema a description", () => {
    const missing = undescribedKeys();
    expect(
      missing,
      `keys without a description (add .meta({ description: "…" }) in the schema): ${missing.join(", ")}`,
    ).toEqual([]);
  });

  it("documents every environment variable at a key of the schema", () => {
    const paths = new Set(referenceRows().map((r) => r.path));
    const stray = Object.entries(ENV_KEYS)
      .filter(([, path]) => !paths.has(path.join(".")))
      .map(([name]) => name);
    expect(stray, `environment variables set keys the schema does not have: ${stray.join(", ")}`).toEqual([]);
    const documented = referenceRows().flatMap((r) => r.env);
    expect(documented.sort()).toEqual(Object.keys(ENV_KEYS).sort());
  });
});

describe("the reference generator", () => {
  const schema = z.object({
    net: z
      .object({
        port: z.coerce
          .number()
          .int()
          .min(0)
          .max(65535)
          .default(80)
          .meta({ description: "Where it listens." }),
        peers: z
          .array(z.object({ host: z.string().meta({ description: "A peer." }), weight: z.number() }))
          .default([]),
        mode: z.enum(["fast", "safe"]).optional(),
      })
      .prefault({}),
    agents: z.record(z.string(), z.object({ name: z.string() })).default({}),
  });

  it("names the keys that lack a description, nested ones included", () => {
    expect(undescribedKeys(schema)).toEqual([
      "net",
      "net.peers",
      "net.peers[].weight",
      "net.mode",
      "agents",
      "agents.<name>.name",
    ]);
  });

  it("reads types, defaults and environment names from the schema", () => {
    const rows = referenceRows(schema, { NET_PORT: ["net", "port"] });
    const row = (path: string) => rows.find((r) => r.path === path);
    expect(row("net.port")).toMatchObject({ env: ["NET_PORT"], type: "port number", default: "`80`" });
    expect(row("net.mode")).toMatchObject({ env: [], type: "`fast` or `safe`", default: "—" });
    expect(row("net.peers")).toMatchObject({ type: "list of objects (keys below)", default: "none" });
    expect(row("net.peers[].host")?.description).toBe("A peer.");
  });

  it("says which lines differ", () => {
    expect(differingLines("a\nb\nc", "a\nB\nc")).toEqual(["line 2:\n  file:   b\n  schema: B"]);
  });
});
