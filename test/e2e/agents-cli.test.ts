// Agents as an operator runs them: `voice-bridge start --config FILE` in its own process; SIGHUP
// and `voice-bridge reload` read the file again (a broken one is refused and the running agents
// stay); `voice-bridge call --to --param` reaches the routed agent with its variables. The bridge
// is closed by default: the commands, given the same config file, find its token in the data dir.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tokenPath } from "../../app/bridge-token.ts";
import { bridgeFetch } from "../helpers/bridge-token.ts";
import { until } from "../helpers/until.ts";

const run = promisify(execFile);
const BIN = new URL("../../bin/voice-bridge", import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), "vb-agents-cli-"));
const file = join(dir, "voice-bridge.yaml");
let proc: ChildProcess;
let url = "";
let token = "";
let log = "";

const env: NodeJS.ProcessEnv = { ...process.env, LOG_FORMAT: "json", LOG_LEVEL: "info" };
delete env.VOICE_BRIDGE_CONFIG;
delete env.PORT;

const config = (agents: string) =>
  [
    "server: { host: 127.0.0.1, port: 0 }",
    "sip: { port: off }",
    `local: { dataDir: ${join(dir, "data")} }`,
    "agents:",
    agents,
    "routes:",
    '  - { to: "+15550001", agent: sales }',
    "",
  ].join("\n");
const SALES = '  sales: { greeting: "Sales. Account {{param.account}}." }';

beforeAll(async () => {
  writeFileSync(file, config(SALES));
  proc = spawn(BIN, ["start", "--config", file], { env, stdio: ["ignore", "pipe", "pipe"] });
  await new Promise<void>((resolve, reject) => {
    const read = (c: Buffer) => {
      log += c;
      const m = /"url":"(http:\/\/127\.0\.0\.1:\d+)"[^\n]*bridge listening/.exec(log);
      if (m) {
        url = m[1]!;
        token = readFileSync(tokenPath(join(dir, "data")), "utf8").trim();
        resolve();
      }
    };
    proc.stdout!.on("data", read);
    proc.stderr!.on("data", read);
    proc.once("exit", (code) => reject(new Error(`bridge exited ${code}: ${log}`)));
  });
}, 60_000);
afterAll(async () => {
  if (proc && proc.exitCode === null) {
    const exited = new Promise((r) => proc.once("exit", r));
    proc.kill("SIGTERM");
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

const get = (path: string) => bridgeFetch({ url, token }, path);
const agents = async () => ((await (await get("/agents")).json()) as { agents: string[] }).agents;

describe("agents from the command line", () => {
  it("SIGHUP reads the file again; a broken file is refused and the agents stay", async () => {
    expect(await agents()).toEqual(["default", "sales"]);
    writeFileSync(file, config(`${SALES}\n  support: { greeting: "Support." }`));
    proc.kill("SIGHUP");
    await until(async () => ((await agents()).includes("support") ? true : undefined), "the reload");
    writeFileSync(file, config(`${SALES}\n  support: { greting: "typo" }`));
    proc.kill("SIGHUP");
    await until(async () => (log.includes("reload refused") ? true : undefined), "the refusal");
    expect(log).toMatch(
      /agents\.support\.greting: unknown key \\"greting\\" \(did you mean \\"greeting\\"\?\)/,
    );
    expect(await agents()).toEqual(["default", "sales", "support"]);
  }, 30_000);

  it("voice-bridge reload asks the running bridge, and says what it did", async () => {
    writeFileSync(file, config(`${SALES}\n  billing: { greeting: "Billing." }`));
    await expect(
      run(BIN, ["reload", "--url", url, "--token", "not-the-token"], { env }),
    ).rejects.toMatchObject({ code: 2, stderr: expect.stringMatching(/refused[\s\S]*token/) });
    expect(await agents()).toEqual(["default", "sales", "support"]);
    const { stdout } = await run(BIN, ["reload", "--config", file, "--url", url], { env });
    expect(stdout).toMatch(/reloaded: agents default, sales, billing/);
    expect(await agents()).toEqual(["default", "sales", "billing"]);
  }, 30_000);

  it("voice-bridge call --to --param reaches the routed agent with the parameter", async () => {
    const { stdout } = await run(
      BIN,
      [
        "call",
        "--config",
        file,
        "--url",
        url,
        "--to",
        "+15550001",
        "--from",
        "+15559876",
        "--param",
        "account=Z-9",
        "--max-seconds",
        "5",
      ],
      { env },
    );
    expect(stdout).toContain("Sales. Account Z-9.");
    const calls = (await (await get("/calls")).json()) as {
      calls: { agent?: string; from?: string }[];
    };
    expect(calls.calls[0]).toMatchObject({ agent: "sales", from: "+15559876" });
    await expect(run(BIN, ["call", "--url", url, "--param", "oops"], { env })).rejects.toMatchObject({
      stderr: expect.stringMatching(/--param: "oops" is not NAME=VALUE/),
    });
  }, 30_000);
});
