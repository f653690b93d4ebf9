// The public API and the CLI sit on top of the dependency picture (DESIGN.md): nothing below them
// imports them. The library (src/library, src/index.ts) is imported only by the CLI, which runs the
// same bridge; the session, the agents and the transports know nothing of it.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".d.ts"))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

/** The files `file` imports (static or dynamic), as paths from the root. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  const specifiers = [...text.matchAll(/(?:from|import\()\s*"(\.[^"]+)"/g)].map((m) => m[1]!);
  return specifiers.map((s) => relative(ROOT, resolve(ROOT, file, "..", s)));
}

describe("the public API is on top", () => {
  it("only the CLI imports the library; nothing imports the package's index", () => {
    const offenders: string[] = [];
    for (const file of [...sources("src"), ...sources("bridges"), ...sources("codecs")]) {
      if (file.startsWith("src/library/") || file === "src/index.ts") continue;
      for (const target of importsOf(file)) {
        const library = target.startsWith("src/library/") || target === "src/index.ts";
        if (library && !(file === "src/cli.ts" && target === "src/library/create-bridge.ts"))
          offenders.push(`${file} imports ${target}`);
      }
    }
    expect(offenders).toEqual([]);
    // The check reads imports at all: the CLI's is found.
    expect(importsOf("src/cli.ts")).toContain("src/library/create-bridge.ts");
  });

  it("the composition root (src/main.ts) is the library's alone: the CLI and make start go through createBridge's runBridge", () => {
    const offenders: string[] = [];
    for (const file of [...sources("src"), ...sources("bridges"), ...sources("codecs")]) {
      if (file.startsWith("src/library/")) continue;
      for (const target of importsOf(file))
        if (target === "src/main.ts") offenders.push(`${file} imports ${target}`);
    }
    expect(offenders).toEqual([]);
    expect(importsOf("src/library/create-bridge.ts")).toContain("src/main.ts");
    // make start runs the CLI, whose start is runBridge.
    expect(readFileSync(join(ROOT, "Makefile"), "utf8")).toMatch(/^start:.*\n\t@bin\/voice-bridge .*start$/m);
    expect(readFileSync(join(ROOT, "src/cli.ts"), "utf8")).toMatch(/runBridge\(config/);
  });
});
