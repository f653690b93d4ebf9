// The VAD's ONNX runtime phones nobody. onnxruntime-node's Linux build, left to itself, writes a
// device id and a debug log to the temporary directory on its first session and posts telemetry to
// Microsoft; codecs/silero-session.ts turns that off. Checked in a fresh process (ORT reads the
// setting once, when it makes its first session) whose temporary directory is its own: without the
// setting, `.ses` and `mat-debug-<pid>.log` appear there (seen when this test was written, by
// running it with the line in silero-session.ts removed; not run here, as it would post to
// Microsoft).
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const sessionModule = new URL("../../codecs/silero-session.ts", import.meta.url).href;

async function makeSession(env: NodeJS.ProcessEnv): Promise<string> {
  const script = [
    `import { createSileroSession } from ${JSON.stringify(sessionModule)};`,
    "const session = await createSileroSession();",
    "console.log(JSON.stringify({ setting: process.env.ORT_DISABLE_TELEMETRY, inputs: session.inputNames.length }));",
  ].join("\n");
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      "--experimental-strip-types",
      "--disable-warning=ExperimentalWarning",
      "--input-type=module",
      "-e",
      script,
    ],
    { env, timeout: 30_000 },
  );
  return stdout.trim();
}

describe("onnxruntime telemetry", () => {
  it("is off by default: a process that makes a Silero session leaves no device id and no debug log", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ort-telemetry-"));
    const env: NodeJS.ProcessEnv = { ...process.env, TMPDIR: dir };
    delete env.ORT_DISABLE_TELEMETRY;
    const made = JSON.parse(await makeSession(env));
    expect(readdirSync(dir)).toEqual([]);
    expect(made).toEqual({ setting: "1", inputs: 3 });
  });
});
