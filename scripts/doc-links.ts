// Checks the docs' relative links: each must name a file that exists and, with a #fragment, a
// heading of that file as GitHub anchors it. The docs are split into pages that link to each
// other's sections, so a renamed heading or moved page would otherwise break links silently.
// Run: node scripts/doc-links.ts (prints the broken links; exits 1 when there are any).
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The Markdown files whose links are checked: README.md, docs/*.md, examples/README.md. */
export function docFiles(root = ROOT): string[] {
  const pages = (dir: string) =>
    existsSync(join(root, dir))
      ? readdirSync(join(root, dir))
          .filter((name) => name.endsWith(".md"))
          .sort()
          .map((name) => join(root, dir, name))
      : [];
  // The users' pages, then the developers' notes (docs/dev) and the index of kept bench results.
  return [
    join(root, "README.md"),
    ...pages("docs"),
    ...pages("docs/dev"),
    join(root, "bench", "results", "README.md"),
    join(root, "examples", "README.md"),
  ].filter((f) => existsSync(f));
}

export interface DocLink {
  file: string;
  line: number;
  target: string;
}

export interface BrokenLink extends DocLink {
  reason: string;
}

/** The lines of a Markdown text outside fenced code blocks, with their 1-based numbers. */
function proseLines(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fence: string | undefined;
  text.split("\n").forEach((line, i) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === undefined || marker.startsWith(fence))) {
      fence = fence === undefined ? marker : undefined;
      return;
    }
    if (fence === undefined) out.push({ line: i + 1, text: line });
  });
  return out;
}

/** GitHub's anchor for a heading: lowercase, punctuation removed, each space a hyphen. */
export function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // a link in a heading anchors as its text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors of a Markdown text's headings; a repeated one gets -1, -2, … as on GitHub. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { text: line } of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    out.add(count === 0 ? base : `${base}-${count}`);
  }
  return out;
}

/** The relative links (inline links and images) of a Markdown file; URLs with a scheme are left out. */
export function relativeLinks(file: string, text: string): DocLink[] {
  const links: DocLink[] = [];
  for (const { line, text: raw } of proseLines(text)) {
    // Code spans are not links, unless a link's text is code (`[`server`](#server)`).
    const prose = raw.replace(/`[^`]*`/g, (span, at: number) =>
      raw[at - 1] === "[" && raw[at + span.length] === "]" ? span : "",
    );
    for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = m[1] ?? "";
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      links.push({ file, line, target });
    }
  }
  return links;
}

/** Every relative link of the files that names a missing file or a heading its file lacks. */
export function brokenLinks(files: string[]): BrokenLink[] {
  const broken: BrokenLink[] = [];
  const anchorsOf = new Map<string, Set<string>>();
  for (const file of files) {
    for (const link of relativeLinks(file, readFileSync(file, "utf8"))) {
      const [path = "", fragment] = link.target.split("#", 2);
      const target = path === "" ? file : resolve(dirname(file), decodeURIComponent(path));
      if (!existsSync(target)) {
        broken.push({ ...link, reason: `no such file: ${path}` });
        continue;
      }
      if (fragment === undefined) continue;
      if (statSync(target).isDirectory()) {
        broken.push({ ...link, reason: `#${fragment} on a directory` });
        continue;
      }
      let known = anchorsOf.get(target);
      if (!known) {
        known = anchors(readFileSync(target, "utf8"));
        anchorsOf.set(target, known);
      }
      if (!known.has(decodeURIComponent(fragment).toLowerCase())) {
        broken.push({
          ...link,
          reason: `no heading #${fragment} in ${relative(dirname(file), target) || path}`,
        });
      }
    }
  }
  return broken;
}

export function describeBroken(link: BrokenLink, root = ROOT): string {
  return `${relative(root, link.file)}:${link.line}: (${link.target}) ${link.reason}`;
}

function main(): number {
  const files = docFiles();
  const broken = brokenLinks(files);
  for (const link of broken) console.log(describeBroken(link));
  if (broken.length === 0) console.log(`${files.length} files: every relative link resolves`);
  return broken.length === 0 ? 0 : 1;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) process.exitCode = main();
