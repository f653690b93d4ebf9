// Everything the tests write to the temporary directory (their own files, and those of the programs
// they start: baresip's WAV dumps, SIPp's logs, Chromium's profiles) goes into one directory per
// run, removed when the run ends. Test files keep calling tmpdir() as usual; without this, each run
// of the suite left some hundred directories and 50 MB in /tmp.
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), "vb-test-"));
  // As open as /tmp itself: programs the tests run as other users (PostgreSQL's initdb, as
  // postgres) make their directories in it too.
  chmodSync(dir, 0o1777);
  // Read by os.tmpdir() in the test workers, which inherit this environment, and by what they start.
  process.env.TMPDIR = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
