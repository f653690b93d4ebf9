// The tree reads top-down (DESIGN.md, "Layout"): app/ composes everything and nothing imports it;
// tools/ (the Twilio call simulator) sits beside it; bridges/ implement the session's ports; src/
// holds the session, the agents, the call records, dialing, the configuration, the client and the
// local service; codecs/ is pure audio at the bottom. Inside src/ each folder may use only the ones
// listed below it here, and no two folders import each other, directly or round a longer loop.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");
const TOP = ["app", "tools", "bridges", "src", "codecs"];

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".d.ts"))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

/** The files `file` imports (static, dynamic or re-exported), as paths from the root. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  const specifiers = [...text.matchAll(/(?:from|import\()\s*"(\.[^"]+)"/g)].map((m) => m[1]!);
  return specifiers.map((s) => relative(ROOT, resolve(ROOT, dirname(file), s)));
}

/** The folder a file counts in: src/<room>, bridges/<transport> (or bridges for the shared files), or the top folder. */
function room(file: string): string {
  const parts = file.split("/");
  if ((parts[0] === "src" || parts[0] === "bridges") && parts.length > 2) return `${parts[0]}/${parts[1]}`;
  return parts[0]!;
}

/** What each room may import besides itself: the floors below it. */
const MAY_USE: Record<string, (target: string) => boolean> = {
  app: () => true,
  tools: (t) => !t.startsWith("app"),
  bridges: (t) => t.startsWith("bridges") || t.startsWith("src/") || t === "codecs",
  codecs: () => false,
  "src/core": () => false,
  // The client stands alone but for core's pure helpers (Base64, guards), which everything in src may use.
  "src/api": (t) => t === "src/core",
  "src/config": (t) => t === "src/core",
  "src/service": (t) => ["src/core", "src/api", "codecs"].includes(t),
  "src/records": (t) => ["src/core", "src/config", "src/api"].includes(t),
  "src/session": (t) => ["src/core", "src/api", "src/records", "codecs"].includes(t),
  "src/agents": (t) => ["src/core", "src/api", "src/config", "src/records", "src/session"].includes(t),
  "src/outbound": (t) =>
    ["src/core", "src/api", "src/config", "src/records", "src/session", "src/agents", "codecs"].includes(t),
  // Campaigns place their calls through outbound's request (DialBody) and read the records' events.
  "src/campaigns": (t) => ["src/core", "src/config", "src/records", "src/outbound"].includes(t),
};

function rule(from: string): (target: string) => boolean {
  const own = MAY_USE[from] ?? MAY_USE[from.split("/")[0]!];
  if (!own) throw new Error(`${from}: a folder the layering rules do not place; add it to MAY_USE`);
  return own;
}

const FILES = TOP.flatMap(sources);

function edges(): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  for (const file of FILES)
    for (const target of importsOf(file)) {
      const [a, b] = [room(file), room(target)];
      if (a === b) continue;
      if (!out.has(a)) out.set(a, new Map());
      if (!out.get(a)!.has(b)) out.get(a)!.set(b, `${file} imports ${target}`);
    }
  return out;
}

describe("the tree reads top-down", () => {
  it("every room places in the rules, and the check sees imports at all", () => {
    for (const file of FILES) rule(room(file));
    expect(importsOf("app/cli.ts")).toContain("app/library/create-bridge.ts");
    expect(edges().get("src/session")?.has("src/core")).toBe(true);
  });

  it("no import goes up a floor", () => {
    const offenders: string[] = [];
    for (const [from, targets] of edges())
      for (const [to, example] of targets)
        if (!rule(from)(to)) offenders.push(`${from} -> ${to}: ${example}`);
    expect(offenders).toEqual([]);
  });

  it("the session reaches the service only through its ports: of the client, the wire types alone", () => {
    const offenders = sources("src/session").flatMap((file) =>
      importsOf(file)
        .filter((t) => t.startsWith("src/api/") && !t.startsWith("src/api/types/"))
        .map((t) => `${file} imports ${t}`),
    );
    expect(offenders).toEqual([]);
  });

  it("bridges take their own settings, never the whole configuration", () => {
    const offenders = sources("bridges").flatMap((file) =>
      importsOf(file)
        .filter((t) => t === "src/config/config.ts")
        .map((t) => `${file} imports ${t}`),
    );
    expect(offenders).toEqual([]);
  });

  it("no two folders import each other, directly or round a loop", () => {
    const graph = edges();
    const cycles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const path: string[] = [];
    const visit = (node: string) => {
      state.set(node, "open");
      path.push(node);
      for (const next of graph.get(node)?.keys() ?? []) {
        if (state.get(next) === "open") cycles.push([...path.slice(path.indexOf(next)), next].join(" -> "));
        else if (!state.has(next)) visit(next);
      }
      path.pop();
      state.set(node, "done");
    };
    for (const node of graph.keys()) if (!state.has(node)) visit(node);
    expect(cycles).toEqual([]);
  });

  it("only the CLI and the package's entry import the library; the composition root is the library's alone", () => {
    const offenders: string[] = [];
    for (const file of FILES) {
      if (file.startsWith("app/library/") || file === "app/index.ts") continue;
      for (const target of importsOf(file)) {
        const library = target.startsWith("app/library/") || target === "app/index.ts";
        // The CLI runs the library's bridge (start) and its agent tests (test).
        const cli = ["app/library/create-bridge.ts", "app/library/agent-tests/command.ts"];
        if (library && !(file === "app/cli.ts" && cli.includes(target)))
          offenders.push(`${file} imports ${target}`);
        if (target === "app/bridge/start.ts" && !file.startsWith("app/bridge/"))
          offenders.push(`${file} imports ${target}`);
      }
    }
    expect(offenders).toEqual([]);
    expect(importsOf("app/library/create-bridge.ts")).toContain("app/bridge/start.ts");
    // make start runs the CLI, whose start is runBridge.
    expect(readFileSync(join(ROOT, "Makefile"), "utf8")).toMatch(/^start:.*\n\t@bin\/voice-bridge .*start$/m);
    expect(readFileSync(join(ROOT, "app/cli.ts"), "utf8")).toMatch(/runBridge\(config/);
  });
});
