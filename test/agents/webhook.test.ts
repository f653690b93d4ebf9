// The call-start webhook against a real HTTP server on loopback: its answer picks the agent,
// adds variables and overrides settings, or rejects; a late, failed, unreadable or unusable
// answer leaves the route's agent in charge, with the cause counted.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AgentDirectory } from "../../src/agents/directory.ts";
import { loadConfig } from "../../src/config/config.ts";
import { createLogger } from "../../src/core/log.ts";
import { SIGNATURE_HEADER, signReport, TIMESTAMP_HEADER } from "../../src/records/reports/signature.ts";
import type { CallInfo } from "../../src/session/transport.ts";
import { type Answer, HttpRecorder } from "../helpers/http-recorder.ts";

const SECRET = "webhook-secret-0123456789";
let hook: HttpRecorder;
const answers: Record<string, Answer> = {
  "/ok": {
    json: {
      agent: "vip",
      variables: { tier: "gold", visits: 3 },
      overrides: {
        greeting: "Welcome back, {{var.tier}} member {{param.account}}.",
        voice: "en_male_oliver",
      },
    },
  },
  "/keep": { json: { variables: { tier: "silver" } } },
  "/desk": { json: { variables: { desk: "desk-7" } } },
  "/late": { json: { agent: "vip" }, delayMs: 600 },
  "/fail": { status: 503, text: "upstream down" },
  "/garbage": { text: "<html>oops</html>" },
  "/wrong-shape": { json: { agent: 7 } },
  "/reject": { json: { reject: { reason: "blocked number" } } },
  "/unknown": { json: { agent: "nobody" } },
  "/bad-overrides": { json: { overrides: { greting: "typo", maxReprompts: 99 } } },
  // The MCP servers are the bridge's, started with it: a call cannot bring its own (a program to run).
  "/mcp-overrides": { json: { overrides: { mcpServers: { x: { command: "/bin/sh" } } } } },
};

beforeAll(async () => {
  hook = await HttpRecorder.start((req) => answers[req.path] ?? { status: 404 });
});
afterAll(() => hook.close());

const log = createLogger({ level: "silent", format: "json" });
const info: CallInfo = {
  callId: "CA123",
  transport: "twilio",
  from: "+15551234",
  to: "+15550001",
  params: { account: "A-17" },
};

function directory(path: string, timeoutMs = 300) {
  const failures: string[] = [];
  const config = loadConfig({
    env: {},
    overrides: {},
  });
  const dir = new AgentDirectory(
    {
      ...config,
      agent: { ...config.agent, greeting: "Hello from default, {{var.tier}}." },
      agents: {
        vip: { ...config.agent, greeting: "VIP line." },
      },
      agentWebhook: { url: `${hook.url}${path}`, secret: SECRET, timeoutMs },
    },
    { webhookFailed: (cause) => failures.push(cause) },
  );
  return { dir, failures };
}

describe("the call-start webhook", () => {
  it("is POSTed the call, signed as the reports are, and its answer picks, fills and overrides", async () => {
    const { dir, failures } = directory("/ok");
    const pick = await dir.pick(info, log);
    expect(failures).toEqual([]);
    expect(pick.kind).toBe("agent");
    if (pick.kind !== "agent") return;
    expect(pick.agent.name).toBe("vip");
    expect(pick.agent.chosenBy).toBe("webhook");
    expect(pick.agent.variables).toEqual({ tier: "gold", visits: "3" });
    expect(pick.agent.session.greeting).toBe("Welcome back, gold member A-17.");
    expect(pick.agent.models.voice).toBe("en_male_oliver");
    const req = hook.to("/ok").at(-1)!;
    expect(JSON.parse(req.body.toString())).toEqual({
      callId: "CA123",
      transport: "twilio",
      from: "+15551234",
      to: "+15550001",
      params: { account: "A-17" },
      agent: "default",
    });
    const ts = req.headers[TIMESTAMP_HEADER.toLowerCase()] as string;
    expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(5);
    expect(req.headers[SIGNATURE_HEADER.toLowerCase()]).toBe(signReport(SECRET, ts, req.body));
  });

  it("may only add variables, leaving the route's agent", async () => {
    const { dir } = directory("/keep");
    const pick = await dir.pick(info, log);
    expect(pick.kind === "agent" && pick.agent.session.greeting).toBe("Hello from default, silver.");
  });

  it("fills the transfer target and the HTTP tools' URL, headers and body with the call's variables", async () => {
    const config = loadConfig({ env: {} });
    const dir = new AgentDirectory({
      ...config,
      agent: {
        ...config.agent,
        transferTarget: "sip:{{var.desk}}@pbx.example.com",
        httpTools: [
          {
            name: "crm",
            description: "d",
            url: "https://crm.example.com/{{param.account}}?line={{called}}",
            method: "POST",
            timeoutMs: 1000,
            headers: { "x-caller": "{{caller}}" },
            body: { desk: "{{var.desk}}" },
            parameters: {},
          },
        ],
      },
      agentWebhook: { url: `${hook.url}/desk`, secret: SECRET, timeoutMs: 500 },
    });
    const pick = await dir.pick({ ...info, params: { account: "A 17" } }, log);
    if (pick.kind !== "agent") throw new Error("rejected");
    expect(pick.agent.session.transferTarget).toBe("sip:desk-7@pbx.example.com");
    expect(pick.agent.session.httpTools[0]).toMatchObject({
      url: "https://crm.example.com/A%2017?line=%2B15550001",
      headers: { "x-caller": "+15551234" },
      body: { desk: "desk-7" },
    });
  });

  it("rejects the call when it says so", async () => {
    const { dir } = directory("/reject");
    expect(await dir.pick(info, log)).toMatchObject({
      kind: "reject",
      reason: "blocked number",
      agent: "default",
    });
  });

  it.each([
    ["/late", "timeout"],
    ["/fail", "http_error"],
    ["/garbage", "bad_answer"],
    ["/wrong-shape", "bad_answer"],
    ["/unknown", "unknown_agent"],
    ["/bad-overrides", "bad_overrides"],
    ["/mcp-overrides", "bad_overrides"],
  ])("%s: the route's agent takes the call, the cause is counted (%s)", async (path, cause) => {
    const { dir, failures } = directory(path);
    const pick = await dir.pick(info, log);
    expect(failures).toEqual([cause]);
    expect(pick.kind === "agent" && pick.agent.name).toBe("default");
    // Variables the webhook never gave render empty.
    expect(pick.kind === "agent" && pick.agent.session.greeting).toBe("Hello from default, .");
  });

  it("an unreachable webhook counts as unreachable", async () => {
    const closed = await HttpRecorder.start(() => ({}));
    const url = closed.url;
    await closed.close();
    const failures: string[] = [];
    const config = loadConfig({ env: {} });
    const dir = new AgentDirectory(
      { ...config, agentWebhook: { url, secret: SECRET, timeoutMs: 500 } },
      { webhookFailed: (c) => failures.push(c) },
    );
    expect((await dir.pick(info, log)).kind).toBe("agent");
    expect(failures).toEqual(["unreachable"]);
  });

  it("a route's own webhook is asked instead of the global one", async () => {
    const config = loadConfig({ env: {} });
    const dir = new AgentDirectory({
      ...config,
      agents: { vip: { ...config.agent, greeting: "VIP line." } },
      routes: [
        {
          to: "+1555000*",
          agent: "default",
          agentWebhook: { url: `${hook.url}/ok`, secret: SECRET, timeoutMs: 500 },
        },
      ],
      agentWebhook: { url: `${hook.url}/reject`, secret: SECRET, timeoutMs: 500 },
    });
    const routed = await dir.pick(info, log);
    expect(routed.kind === "agent" && routed.agent.name).toBe("vip");
    expect((await dir.pick({ ...info, to: "+4420" }, log)).kind).toBe("reject");
  });
});
