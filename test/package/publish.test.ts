// The package as npm would publish it: scripts/pack.sh makes the tarball and `npm publish --dry-run`
// takes it, offline, towards a registry address where nothing listens, with an empty user config
// (no token): nothing can be written anywhere. What npm would upload must hold every file the
// manifest names (bin, types, exports), the MIT LICENSE and the changelog, with engines declared;
// a copy of the tarball without LICENSE, the types and the CLI, which npm itself would take, is
// refused by the same check.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, "../..");
const NPM = join(dirname(process.execPath), "npm");
/** A registry address nothing answers on (the discard port): a publish could not reach one. */
const NOWHERE = "http://127.0.0.1:9/";

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  license?: string;
  types?: string;
  bin?: Record<string, string>;
  exports?: unknown;
  engines?: { node?: string };
}
interface PublishedFile {
  path: string;
  mode: number;
}

let dir: string;
let tarball: string;

/** What `npm publish --dry-run` would upload from `file`. */
async function dryRunPublish(file: string): Promise<PublishedFile[]> {
  const userconfig = join(dir, "empty-npmrc");
  writeFileSync(userconfig, "");
  const { stdout } = await run(
    NPM,
    ["publish", "--dry-run", "--json", "--offline", "--registry", NOWHERE, "--userconfig", userconfig, file],
    { cwd: dir, env: { ...process.env, npm_config_registry: NOWHERE }, maxBuffer: 16 << 20 },
  );
  const report = JSON.parse(stdout) as Record<string, { files: PublishedFile[] }>;
  return Object.values(report)[0]!.files;
}

/** A file of the tarball, as text. */
async function readPacked(file: string, path: string): Promise<string> {
  return (await run("tar", ["-xOzf", file, `package/${path}`], { maxBuffer: 16 << 20 })).stdout;
}

/** Every path a manifest value names (a string, or the strings in an object such as `exports`). */
function targets(value: unknown): string[] {
  if (typeof value === "string") return [value.replace(/^\.\//, "")];
  return value && typeof value === "object" ? Object.values(value).flatMap(targets) : [];
}

/** Why the published files could not be used as the manifest says; empty when they can. */
function publishProblems(manifest: Manifest, files: PublishedFile[], license: string): string[] {
  const paths = new Set(files.map((f) => f.path));
  const problems: string[] = [];
  if (manifest.private) problems.push("private");
  if (manifest.license !== "MIT") problems.push(`license ${manifest.license}`);
  if (!manifest.engines?.node) problems.push("no engines.node");
  if (!manifest.types) problems.push("no types");
  if (!manifest.bin || Object.keys(manifest.bin).length === 0) problems.push("no bin");
  const named = ["LICENSE", "CHANGELOG.md", "README.md", ...targets(manifest.types)];
  named.push(...targets(manifest.bin), ...targets(manifest.exports));
  for (const path of new Set(named)) if (!paths.has(path)) problems.push(`missing ${path}`);
  for (const path of targets(manifest.bin)) {
    const mode = files.find((f) => f.path === path)?.mode ?? 0;
    if (paths.has(path) && (mode & 0o111) === 0) problems.push(`${path} not executable`);
  }
  if (paths.has("LICENSE") && !license.startsWith("MIT License")) problems.push("LICENSE is not MIT's");
  return problems;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-publish-"));
  const packed = await run("bash", [join(ROOT, "scripts/pack.sh"), join(dir, "pack")], { cwd: ROOT });
  tarball = packed.stdout.trim().split("\n").at(-1)!;
}, 300_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the packed tarball, published with --dry-run", () => {
  it("carries what its manifest names: bin, types, exports, engines, the MIT LICENSE and the changelog", async () => {
    const manifest = JSON.parse(await readPacked(tarball, "package.json")) as Manifest;
    const files = await dryRunPublish(tarball);
    expect(publishProblems(manifest, files, await readPacked(tarball, "LICENSE"))).toEqual([]);
    expect(manifest).toMatchObject({ name: "voice-bridge", engines: { node: ">=22.12" } });
    expect(await readPacked(tarball, "CHANGELOG.md")).toContain(`## ${manifest.version}`);
    // Compiled JavaScript with declarations: no TypeScript source is published.
    expect(files.filter((f) => /\.ts$/.test(f.path) && !f.path.endsWith(".d.ts"))).toEqual([]);
    expect(files.some((f) => f.path === "app/cli.js")).toBe(true);
  }, 60_000);

  it("is publishable only as the tarball: the checkout's package.json stays private", async () => {
    const checkout = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as Manifest;
    const packed = JSON.parse(await readPacked(tarball, "package.json")) as Manifest;
    expect(checkout.private).toBe(true);
    expect(packed.private).toBeUndefined();
    expect(packed.version).toBe(checkout.version);
  });

  it("refuses a tarball without LICENSE, its types and its CLI, which npm alone would publish", async () => {
    const copy = join(dir, "copy");
    mkdirSync(copy);
    await run("tar", ["-xzf", tarball, "-C", copy]);
    for (const path of ["LICENSE", "app/index.d.ts", "bin/voice-bridge"]) rmSync(join(copy, "package", path));
    const broken = join(dir, "broken.tgz");
    await run("tar", ["-czf", broken, "-C", copy, "package"]);
    const manifest = JSON.parse(await readPacked(broken, "package.json")) as Manifest;
    const files = await dryRunPublish(broken);
    expect(publishProblems(manifest, files, "")).toEqual([
      "missing LICENSE",
      "missing app/index.d.ts",
      "missing bin/voice-bridge",
    ]);
  }, 60_000);
});
