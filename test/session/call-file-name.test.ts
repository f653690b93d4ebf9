// Call ids come from outside: whatever they hold, a call's file stays a file inside its directory.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { callFileStem } from "../../src/session/call-file-name.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "vb-call-file-name-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("callFileStem", () => {
  it("keeps a Twilio CallSid and ordinary ids as they are", () => {
    expect(callFileStem("CA0123456789abcdef0123456789abcdef")).toBe("CA0123456789abcdef0123456789abcdef");
    expect(callFileStem("call-1.retry_2")).toBe("call-1.retry_2");
  });

  it("turns separators, spaces and non-ASCII into `_`, one per UTF-16 unit", () => {
    expect(callFileStem("../x/y")).toBe(".._x_y");
    expect(callFileStem("..\\..\\etc\\passwd")).toBe(".._.._etc_passwd");
    expect(callFileStem("a b\tc\n")).toBe("a_b_c_");
    expect(callFileStem("café ☎")).toBe("caf___");
    expect(callFileStem("📞")).toBe("__"); // a surrogate pair
    expect(callFileStem("")).toBe("");
  });

  it("names a file inside the directory for every hostile id", () => {
    const hostile = [
      "../x/y",
      "/abs/path",
      "..",
      ".",
      "a b",
      "caf\u00e9",
      "\u0000nul",
      "C:\\win",
      "x/../../y",
    ];
    for (const id of hostile) {
      const path = join(dir, `${callFileStem(id)}.wav`);
      expect(dirname(path)).toBe(dir);
      writeFileSync(path, id);
    }
    // Each landed in the directory itself (these ids all clean to different names), safe characters only.
    const names = readdirSync(dir);
    expect(names).toHaveLength(hostile.length);
    for (const name of names) expect(name).toMatch(/^[\w.-]+\.wav$/);
  });
});
