// The API's pieces on their own: what the model sees of a tool (zod → JSON schema), how its
// arguments are checked, what a tool can ask of the call, what defineAgent and createBridge refuse
// (before anything starts), and onCallStart's answer taking the webhook's path in the directory:
// variables, overrides, another agent, a rejection; a throw, a wrong answer or a late one leave the
// routed agent in charge, counted as the webhook's failures are.
import { describe, expect, it } from "vitest";
import { ConfigError, createBridge, defineAgent, tool, z } from "../../../app/index.ts";
import { splitAgent } from "../../../app/library/define-agent.ts";
import { AgentDirectory } from "../../../src/agents/directory.ts";
import { loadConfig } from "../../../src/config/config.ts";
import { silentLogger } from "../../../src/core/log.ts";
import { runCodeTool, type ToolCall } from "../../../src/session/code-tools.ts";
import type { CallInfo } from "../../../src/session/transport.ts";

const call: ToolCall = {
  id: "CA1",
  transport: "twilio",
  from: "+15551234",
  to: "+15550001",
  params: {},
  variables: { customer: "C-1" },
};
const env = (said: string[] = [], signal = new AbortController().signal) => ({
  call,
  log: silentLogger,
  say: (t: string) => said.push(t),
  signal,
});

const lookup = tool({
  name: "lookup_order",
  description: "Looks up an order",
  parameters: z.object({
    order_id: z.string().min(3).describe("the order number"),
    detail: z.enum(["status", "eta"]).default("status"),
  }),
  execute: ({ order_id, detail }, ctx) => ({ order_id, detail, customer: ctx.call.variables.customer }),
});

describe("tool()", () => {
  it("gives the model the JSON schema of its zod parameters", () => {
    expect(lookup.parameters).toEqual({
      type: "object",
      properties: {
        order_id: { type: "string", minLength: 3, description: "the order number" },
        detail: { type: "string", enum: ["status", "eta"], default: "status" },
      },
      required: ["order_id"],
    });
  });

  it("checks the model's arguments: wrong ones are told to the model, right ones reach execute typed", async () => {
    expect(await runCodeTool(lookup, { order_id: "12" }, env())).toEqual({
      content: expect.stringMatching(
        /^error: the lookup_order tool failed: invalid arguments \(order_id: .*3/,
      ),
    });
    expect(await runCodeTool(lookup, { order_id: "4217" }, env())).toEqual({
      content: JSON.stringify({ order_id: "4217", detail: "status", customer: "C-1" }),
    });
  });

  it("text results go as they are; ctx.say speaks; ctx.hangUp and ctx.transfer become the call's action", async () => {
    const said: string[] = [];
    const t = tool({
      name: "wrap_up",
      description: "Ends",
      parameters: z.object({ how: z.enum(["hang", "move"]) }),
      execute: ({ how }, ctx) => {
        ctx.say("One moment.");
        if (how === "hang") ctx.hangUp("done");
        else ctx.transfer("sip:desk@example.com");
        return "ok, ending";
      },
    });
    expect(await runCodeTool(t, { how: "hang" }, env(said))).toEqual({
      content: "ok, ending",
      action: { kind: "end-call", reason: "done" },
    });
    expect((await runCodeTool(t, { how: "move" }, env(said))).action).toEqual({
      kind: "transfer",
      target: "sip:desk@example.com",
    });
    expect(said).toEqual(["One moment.", "One moment."]);
  });

  it("refuses a bad name or an empty description where the tool is defined", () => {
    const parameters = z.object({});
    expect(() => tool({ name: "look up", description: "x", parameters, execute: () => "" })).toThrow(
      /letters/,
    );
    expect(() => tool({ name: "t", description: " ", parameters, execute: () => "" })).toThrow(/description/);
  });
});

describe("defineAgent() and createBridge()", () => {
  it("refuses two tools of one name, and a built-in's name", () => {
    expect(() => defineAgent({ tools: [lookup, lookup] })).toThrow(/lookup_order.*two tools/);
    const endCall = tool({ name: "end_call", description: "x", parameters: z.object({}), execute: () => "" });
    expect(() => defineAgent({ tools: [endCall] })).toThrow(/built-in/);
  });

  it("refuses wrong options with each key and what was wrong, before anything starts", async () => {
    const wrong = createBridge({
      env: {},
      agent: { maxCallSeconds: 1 },
      agents: { sales: defineAgent({ greting: "Hi" } as Parameters<typeof defineAgent>[0]) },
    });
    await expect(wrong).rejects.toBeInstanceOf(ConfigError);
    await expect(wrong).rejects.toThrow(
      /createBridge options: agent\.maxCallSeconds: expected a whole number/,
    );
    await expect(wrong).rejects.toThrow(/agents\.sales\.greting.*greeting/);
  });
});

describe("onCallStart, in the directory", () => {
  const info: CallInfo = { callId: "CA9", transport: "sip", from: "+15551234", to: "+15550001", params: {} };
  function directory(onCallStart: Parameters<typeof defineAgent>[0]["onCallStart"]) {
    const failures: string[] = [];
    const reception = splitAgent(
      defineAgent({ greeting: "Hello {{var.name}}.", onCallStart, tools: [lookup] }),
    );
    const config = loadConfig({
      env: {},
      given: {
        name: "test",
        tree: { agent: reception.settings, agents: { vip: { greeting: "VIP line for {{var.name}}." } } },
      },
    });
    const code = new Map([["default", reception.code]]);
    const dir = new AgentDirectory(config, { webhookFailed: (cause) => failures.push(cause) }, code);
    return { pick: () => dir.pick(info, silentLogger), failures };
  }

  it("gives variables and the agent's code tools to the call", async () => {
    const asked: unknown[] = [];
    const { pick } = directory((c) => {
      asked.push(c);
      return { variables: { name: "Ada" } };
    });
    const p = await pick();
    expect(asked).toEqual([
      { callId: "CA9", transport: "sip", from: "+15551234", to: "+15550001", params: {}, agent: "default" },
    ]);
    expect(p.kind === "agent" && p.agent.session.greeting).toBe("Hello Ada.");
    expect(p.kind === "agent" && p.agent.session.variables).toEqual({ name: "Ada" });
    expect(p.kind === "agent" && p.agent.session.codeTools?.map((t) => t.name)).toEqual(["lookup_order"]);
  });

  it("hands the call to another agent with overrides, or rejects it", async () => {
    const other = await directory(async () => ({
      agent: "vip",
      variables: { name: "Grace" },
      overrides: { voice: "en_male_oliver" },
    })).pick();
    expect(other.kind === "agent" && other.agent).toMatchObject({ name: "vip", chosenBy: "webhook" });
    expect(other.kind === "agent" && other.agent.session.greeting).toBe("VIP line for Grace.");
    expect(other.kind === "agent" && other.agent.models.voice).toBe("en_male_oliver");
    expect(await directory(() => ({ reject: { reason: "blocked" } })).pick()).toMatchObject({
      kind: "reject",
      reason: "blocked",
    });
  });

  it("a throw, a wrong answer or bad overrides leave the routed agent, counted", async () => {
    for (const [hook, cause] of [
      [
        () => {
          throw new Error("CRM down");
        },
        "bad_answer",
      ],
      [() => ({ agent: 7 }) as never, "bad_answer"],
      [() => ({ agent: "nobody" }), "unknown_agent"],
      [() => ({ overrides: { maxReprompts: 99 } }), "bad_overrides"],
    ] as const) {
      const d = directory(hook);
      const p = await d.pick();
      expect(p.kind === "agent" && p.agent.name).toBe("default");
      expect(d.failures).toEqual([cause]);
    }
  });
});
