// The docs are split into pages that link to each other: these fail when a link names a page or a
// heading that is not there, or when the README stops being the short entry page that starts with
// the two commands (CI and people run them from there).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { anchors, brokenLinks, describeBroken, docFiles, ROOT, slug } from "../../scripts/doc-links.ts";

const README = readFileSync(join(ROOT, "README.md"), "utf8");

describe("the docs' links", () => {
  it("each names a file that exists and, with a #fragment, one of its headings", () => {
    const files = docFiles();
    expect(files.map((f) => f.slice(ROOT.length + 1))).toEqual(
      expect.arrayContaining([
        "README.md",
        "docs/configuration.md",
        "docs/dev/README.md",
        "bench/results/README.md",
        "examples/README.md",
      ]),
    );
    expect(brokenLinks(files).map((link) => describeBroken(link))).toEqual([]);
  });

  it("the README links every page of docs/", () => {
    const pages = docFiles()
      .filter((f) => dirname(f) === join(ROOT, "docs"))
      .map((f) => f.slice(ROOT.length + 1));
    const unlinked = pages.filter((page) => !README.includes(`](${page})`));
    expect(unlinked, "pages the README's list does not link").toEqual([]);
  });
});

describe("the README", () => {
  const lines = README.replace(/\n$/, "").split("\n");

  it("is at most 250 lines", () => {
    expect(lines.length).toBeLessThanOrEqual(250);
  });

  it("starts with the two commands, make start then make test, in one sh block", () => {
    expect(lines[0]).toBe("# voice-bridge");
    expect(lines[1]).toBe("");
    expect(lines[2]).toBe("```sh");
    expect(lines[3]).toMatch(/^make start\s+#/);
    const end = lines.indexOf("```", 3);
    expect(end).toBeGreaterThan(3);
    const commands = lines.slice(3, end).filter((line) => /^\S/.test(line));
    expect(commands.map((line) => line.split(/\s+/).slice(0, 2).join(" "))).toEqual([
      "make start",
      "make test",
    ]);
  });
});

describe("the link checker", () => {
  const dir = mkdtempSync(join(tmpdir(), "doc-links-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("anchors headings as GitHub does", () => {
    expect(slug("Scale-out: N bridges behind Kamailio (SIP)")).toBe(
      "scale-out-n-bridges-behind-kamailio-sip",
    );
    expect(slug("`createBridge(options): Promise<VoiceBridge>`")).toBe(
      "createbridgeoptions-promisevoicebridge",
    );
    expect(slug("Records, reload")).toBe("records-reload");
    expect(slug("Client (src/api)")).toBe("client-srcapi");
    expect([...anchors("# A\n## Notes\n```\n# not a heading\n```\n## Notes\n")]).toEqual([
      "a",
      "notes",
      "notes-1",
    ]);
  });

  it("reports a missing file, a missing heading, and nothing in code", () => {
    mkdirSync(join(dir, "docs"));
    writeFileSync(join(dir, "docs", "b.md"), "# B\n\n## Real heading\n");
    const page = join(dir, "docs", "a.md");
    writeFileSync(
      page,
      [
        "# A",
        "[ok](b.md#real-heading) [self](#a) [web](https://example.com/x.md)",
        "[gone](c.md) [wrong](b.md#no-such-heading)",
        "`[in code](nowhere.md)`",
        "```",
        "[in a block](nowhere.md)",
        "```",
      ].join("\n"),
    );
    expect(brokenLinks([page]).map((l) => `${l.line} ${l.target}`)).toEqual([
      "3 c.md",
      "3 b.md#no-such-heading",
    ]);
  });
});
