// The local service as a user runs it: `bin/voice-bridge service` in its own process, driven with
// plain curl; the dev key and stored files survive a restart.
import { type ChildProcess, execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { type ServiceProcess, startServiceProcess } from "../helpers/service-process.ts";
import { media } from "../service/helpers/media.ts";

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), "svc-e2e-"));
const procs: ChildProcess[] = [];

afterAll(() => {
  for (const p of procs) p.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

async function startCli(): Promise<ServiceProcess> {
  const started = await startServiceProcess(dir, { SVC_SCRIPTED_PACE_MS: "0" });
  procs.push(started.proc);
  return started;
}

async function stop(proc: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((r) => proc.once("exit", (code) => r(code)));
  proc.kill("SIGTERM");
  return exited;
}

const curl = async (...args: string[]) =>
  (await run("curl", ["-sS", ...args], { maxBuffer: 1 << 24 })).stdout;

describe("voice-bridge service", () => {
  let fileId = "";
  let firstKey = "";

  it("prints its URL and dev key, and answers curl with that key only", async () => {
    const { proc, url, key } = await startCli();
    firstKey = key;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(readFileSync(join(dir, "dev-api-key"), "utf8").trim()).toBe(key);
    const auth = ["-H", `Authorization: Bearer ${key}`];
    const body = JSON.stringify({
      model: "svc-3.7-flash",
      messages: [{ role: "user", content: "are you open on sunday?" }],
    });

    const completion = JSON.parse(
      await curl(...auth, "-H", "Content-Type: application/json", "-d", body, `${url}/v1/chat/completions`),
    );
    expect(completion.choices[0].message.content).toMatch(/Monday to Friday/);

    const stream = await curl(
      "-N",
      ...auth,
      "-H",
      "Content-Type: application/json",
      "-d",
      JSON.stringify({ ...JSON.parse(body), stream: true }),
      `${url}/v1/chat/completions`,
    );
    const lines = stream.split("\n\n").filter(Boolean);
    expect(lines[lines.length - 1]).toBe("data: [DONE]");
    expect(lines.length).toBeGreaterThan(5);

    const denied = await curl(
      "-o",
      "/dev/null",
      "-w",
      "%{http_code}",
      "-H",
      "Authorization: Bearer wrong",
      `${url}/v1/files`,
    );
    expect(denied).toBe("401");

    const uploaded = JSON.parse(
      await curl(...auth, "-F", "purpose=storage", "-F", `file=@${media.png()}`, `${url}/v1/files`),
    );
    expect(uploaded).toMatchObject({ object: "file", filename: "red.png", purpose: "storage" });
    fileId = uploaded.id;
    expect(await stop(proc)).toBe(0);
  });

  it("comes back with the same key and every stored file after a restart", async () => {
    const { proc, url, key } = await startCli();
    expect(key).toBe(firstKey);
    const list = JSON.parse(await curl("-H", `Authorization: Bearer ${key}`, `${url}/v1/files`));
    expect(list.data.map((f: { id: string }) => f.id)).toEqual([fileId]);
    const chat = JSON.parse(
      await curl(
        "-H",
        `Authorization: Bearer ${key}`,
        "-H",
        "Content-Type: application/json",
        "-d",
        JSON.stringify({
          model: "svc-3.7-flash",
          messages: [
            { role: "user", content: [{ type: "image_url", image_url: { url: `svcfile://${fileId}` } }] },
          ],
        }),
        `${url}/v1/chat/completions`,
      ),
    );
    expect(chat.choices[0].message.content).toBe("I can see a 64 by 48 pixel PNG image.");
    expect(await stop(proc)).toBe(0);
  });
});
