// Two agents on one bridge, for the transports' tests: `sales` (a male voice, a greeting with the
// caller's number and an account parameter, an HTTP tool whose URL and body carry them, an
// analysis plan) and `support` (a female voice, a greeting with a variable the call-start webhook
// gives; the webhook rejects one number). A real HTTP server plays the tool, the webhook and the
// call-report receiver. Routes: To +15550001 / SIP user `sales` → sales; +15550002 / `support` /
// the Discord guild / AudioSocket → support; a browser call names its agent.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { type Config, loadConfig } from "../../src/config/config.ts";
import { signReport } from "../../src/records/reports/signature.ts";
import { HttpRecorder, type RecordedRequest } from "./http-recorder.ts";

export const SECRET = "agents-fixture-secret-0123";
export const REJECTED_CALLER = "+16660000";
export const GUILD = "111111111111111111";

export interface AgentsFixture {
  dir: string;
  server: HttpRecorder;
  configFile: string;
  /** The config file's tree (edit and `write` to change it before a reload). */
  tree: Record<string, unknown>;
  write(tree?: Record<string, unknown>): void;
  load(): Config;
  /** The signature the webhook's request should carry. */
  signatureValid(req: RecordedRequest): boolean;
}

/** `sections` are merged over the fixture's own (server, sip, audiosocket, discord…). */
export async function agentsFixture(sections: Record<string, unknown> = {}): Promise<AgentsFixture> {
  const dir = mkdtempSync(join(tmpdir(), "vb-agents-e2e-"));
  mkdirSync(join(dir, "data"), { recursive: true });
  const server = await HttpRecorder.start((req) => {
    if (req.path.startsWith("/accounts/")) return { json: { balance: "42 dollars" } };
    if (req.path === "/hook") {
      const body = JSON.parse(req.body.toString()) as { from: string | null };
      if (body.from === REJECTED_CALLER) return { json: { reject: { reason: "number blocked" } } };
      return { json: { variables: { tier: "gold" } } };
    }
    if (req.path === "/reports") return { status: 204 };
    if (req.path === "/reject") return { json: { reject: true } };
    return { status: 404 };
  });
  // The scripted chat engine: keypad 1 asks for the account (the sales agent's HTTP tool).
  const scripted = join(dir, "scripted.yaml");
  writeFileSync(
    scripted,
    stringify({
      name: "agents test line",
      greeting: "Hello.",
      fallback: "Press 1 for your balance.",
      rules: [
        {
          intent: "balance",
          when: ["keypad: 1\\b"],
          reply: "Let me look.",
          tool: { name: "lookup_account", arguments: { what: "balance" } },
          without_tool: "I cannot look that up here.",
          after_tool: "Your balance is {result.balance}.",
        },
      ],
    }),
  );
  const hook = { url: `${server.url}/hook`, secret: SECRET, timeoutMs: 1500 };
  const tree: Record<string, unknown> = {
    server: { host: "127.0.0.1", port: 0 },
    sip: { port: "off" },
    local: { dataDir: join(dir, "data"), scriptedAgent: scripted, scriptedPaceMs: 0 },
    // Calls are recorded, but the support agent's are not.
    agent: { greeting: "This is the default line.", recordingDir: join(dir, "recordings") },
    agents: {
      sales: {
        greeting: "Sales line. Hello {{caller}}, account {{param.account}}.",
        voice: "en_male_adam",
        httpTools: [
          {
            name: "lookup_account",
            description: "Looks up the caller's account",
            url: `${server.url}/accounts/{{param.account}}`,
            body: { caller: "{{caller}}", line: "{{called}}", via: "{{transport}}" },
            parameters: { what: { type: "string" } },
          },
        ],
        analysis: {
          summary: true,
          fields: {
            line: { type: "string", description: "the line called", enum: ["sales", "support"] },
            callback: { type: "boolean", description: "the caller asked to be called back" },
          },
        },
      },
      support: {
        greeting: "Support line for {{var.tier}} customers.",
        voice: "en_female_aria",
        recording: false,
      },
      // Its analysis cannot succeed: the service knows no such chat model.
      broken: {
        greeting: "Broken line.",
        chatModel: "svc-no-such-model",
        analysis: { fields: { x: { type: "integer", description: "anything" } } },
      },
    },
    routes: [
      // AudioSocket carries no numbers: its line is its transport (the webhook sees the UUID).
      { transport: "audiosocket", agent: "support", agentWebhook: hook },
      { to: "+15550001", agent: "sales" },
      { to: "+15550003", agent: "broken" },
      { to: "sales", agent: "sales" },
      { guild: GUILD, agent: "support", agentWebhook: hook },
      { to: "+15550002", agent: "support", agentWebhook: hook },
      { to: "support", agent: "support", agentWebhook: hook },
    ],
    callReports: { url: `${server.url}/reports`, secret: SECRET, dir: join(dir, "reports") },
    log: { level: "silent" },
  };
  for (const [k, v] of Object.entries(sections))
    tree[k] = typeof v === "object" && v && !Array.isArray(v) ? { ...(tree[k] as object), ...v } : v;
  const configFile = join(dir, "voice-bridge.yaml");
  const f: AgentsFixture = {
    dir,
    server,
    configFile,
    tree,
    write(t = tree) {
      writeFileSync(configFile, stringify(t));
    },
    load: () => loadConfig({ file: configFile, env: {} }),
    signatureValid(req) {
      const ts = req.headers["x-voice-bridge-timestamp"] as string;
      return req.headers["x-voice-bridge-signature"] === signReport(SECRET, ts, req.body);
    },
  };
  f.write();
  return f;
}

export { until } from "./until.ts";
