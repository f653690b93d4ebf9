// `voice-bridge service` in its own process, as a user runs it: started on a free port with its
// own data directory, ready once it has printed its URL and dev key.
import { type ChildProcess, spawn } from "node:child_process";

const BIN = new URL("../../bin/voice-bridge", import.meta.url).pathname;

export interface ServiceProcess {
  proc: ChildProcess;
  url: string;
  key: string;
}

export async function startServiceProcess(
  dataDir: string,
  env: NodeJS.ProcessEnv = {},
): Promise<ServiceProcess> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, SVC_LOCAL_API_KEYS: "", LOG_LEVEL: "warn", ...env };
  delete childEnv.SVC_LOCAL_PORT;
  const proc = spawn(BIN, ["service", "--port", "0", "--data-dir", dataDir], {
    env: childEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  await new Promise<void>((resolve, reject) => {
    proc.stdout!.on("data", (c: Buffer) => {
      out += c;
      if (/API keys accepted.*\n/.test(out)) resolve();
    });
    proc.once("exit", (code) => reject(new Error(`service exited ${code}: ${out}`)));
  });
  const url = /listening on (http:\/\/\S+)/.exec(out)![1]!;
  const key = /API keys accepted[^:]*: (\S+)/.exec(out)![1]!;
  return { proc, url, key };
}
