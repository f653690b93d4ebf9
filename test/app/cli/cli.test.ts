// The CLI as a user runs it: the real bin/voice-bridge in a child process.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";

const BIN = new URL("../../../bin/voice-bridge", import.meta.url).pathname;
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
});

function run(args: string[], env: Record<string, string> = {}) {
  return spawnSync(BIN, args, { encoding: "utf8", env: { ...process.env, ...env } });
}

describe("voice-bridge CLI", () => {
  it("has --help on every level", () => {
    const top = run(["--help"]);
    expect(top.status).toBe(0);
    expect(top.stdout).toMatch(/Commands:[\s\S]*start[\s\S]*config/);
    const start = run(["start", "--help"]);
    expect(start.status).toBe(0);
    expect(start.stdout).toMatch(/--port <port>/);
  });

  it("rejects a bad environment value with exit 2 and a message naming it", () => {
    const r = run(["config"], { PORT: "eighty" });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("environment variable PORT (server.port): expected a port number 0-65535");
  });

  it("prints the resolved configuration with secrets masked", () => {
    const r = run(["config"], {
      SVC_API_KEY: "secret-key",
      PORT: "9999",
      DISCORD_TOKEN: "bot-token-xyz",
      CALL_REPORT_URL: "https://reports.example.com/calls",
      CALL_REPORT_SECRET: "report-secret-0123456789",
    });
    expect(r.status).toBe(0);
    const config = JSON.parse(r.stdout) as {
      server: { port: number };
      service: { apiKey: string };
      discord: { token: string };
      callReports: { url: string; secret: string };
    };
    expect(config.server.port).toBe(9999);
    expect(config.service.apiKey).toBe("***");
    expect(config.discord.token).toBe("***");
    expect(config.callReports).toEqual({ url: "https://reports.example.com/calls", secret: "***" });
    expect(r.stdout).not.toContain("secret-key");
    expect(r.stdout).not.toContain("bot-token-xyz");
    expect(r.stdout).not.toContain("report-secret-0123456789");
  });

  it("masks every credential the schema marks secret, SIP passwords and the database's included", () => {
    const r = run(["config"], {
      SIP_USERS: "alice:digest-pass-4711",
      SIP_REGISTER: "sip:bob:register-pass-4712@127.0.0.1:5080",
      SIP_OUTBOUND_PROXY: "sip:127.0.0.1:5070",
      SIP_OUTBOUND_USER: "carol",
      SIP_OUTBOUND_PASSWORD: "outbound-pass-4713",
      DATABASE_URL: "postgres://dave:db-pass-4714@127.0.0.1:5432/calls",
      TWILIO_AUTH_TOKEN: "twilio-token-4715",
      SVC_LOCAL_API_KEYS: "local-key-4716,local-key-4717",
    });
    expect(r.status).toBe(0);
    for (const secret of ["4711", "4712", "4713", "4714", "4715", "4716", "4717"])
      expect(r.stdout).not.toContain(secret);
    // What is not a credential stays readable: the account names and where the database is.
    const config = JSON.parse(r.stdout) as {
      sip: { users: { user: string }[]; registrations: { user: string }[] };
      store: { databaseUrl: string };
    };
    expect(config.sip.users.map((u) => u.user)).toEqual(["alice"]);
    expect(config.sip.registrations.map((u) => u.user)).toEqual(["bob"]);
    expect(config.store.databaseUrl).toBe("postgres://dave:***@127.0.0.1:5432/calls");
  });

  it("starts, answers /healthz and /readyz, and stops cleanly on SIGTERM", async () => {
    const child = spawn(BIN, ["start", "--host", "127.0.0.1", "--port", "0"], {
      env: { ...process.env, LOG_FORMAT: "json", SIP_PORT: "off" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    children.push(child);
    let url = "";
    for await (const line of createInterface({ input: child.stdout! })) {
      const entry = JSON.parse(line) as { msg: string; url?: string };
      if (entry.url && entry.msg.startsWith("bridge listening")) {
        url = entry.url;
        break;
      }
    }
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: "ok" });
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    child.kill("SIGTERM");
    const [code] = await once(child, "exit");
    expect(code).toBe(0);
  });
});
