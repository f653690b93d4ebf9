// The scripted agent's decisions on the demo hotline, and the agent file's validation.
import { describe, expect, it } from "vitest";
import { loadAgent, parseAgent } from "../../src/service/engines/chat/scripted/agent.ts";
import { decide } from "../../src/service/engines/chat/scripted/decide.ts";
import { jsonReply } from "../../src/service/engines/chat/scripted/json-reply.ts";
import { normalizeHeard, wordPieces } from "../../src/service/engines/chat/scripted/words.ts";
import type { ConvMessage, GenRequest, ToolSpec } from "../../src/service/generation/request.ts";

const agent = loadAgent();
const tool = (name: string): ToolSpec => ({
  name,
  description: "",
  parameters: { type: "object", properties: {} },
});
const TOOLS = [tool("lookup_order"), tool("transfer_call"), tool("end_call")];
const req = (messages: ConvMessage[], tools = TOOLS): GenRequest => ({
  model: "svc-3.7-flash",
  messages,
  tools,
  stop: [],
  output: { kind: "text" },
});
const say = (text: string): ConvMessage => ({ role: "user", parts: [{ type: "text", text }] });

describe("demo hotline", () => {
  it("greets on a fresh call, system prompt or not", () => {
    expect(decide(agent, req([])).text).toBe("Thanks for calling Acme Bikes. How can I help you?");
    expect(decide(agent, req([{ role: "system", text: "be nice" }])).intent).toBe("greeting");
  });

  it.each([
    ["What time do you open on Saturday?", "opening_hours", /Saturday ten to four/],
    ["where are you located", "location", /Harbour Street/],
    ["thanks a lot", "thanks", /welcome/],
    ["Hello there", "greeting", /How can I help/],
    ["my bike makes a noise", "fallback", /opening hours, where we are/],
  ])("%s → %s", (text, intent, reply) => {
    const d = decide(agent, req([say(text)]));
    expect(d.intent).toBe(intent);
    expect(d.text).toMatch(reply);
    expect(d.toolCall).toBeUndefined();
  });

  it("asks for the order number, then calls lookup_order with the spoken digits", () => {
    const first = decide(agent, req([say("I want to check on my delivery")]));
    expect(first).toMatchObject({ intent: "ask:order_status", text: "Sure. What's your order number?" });
    const second = decide(
      agent,
      req([
        say("I want to check on my delivery"),
        { role: "assistant", text: first.text, toolCalls: [] },
        say("it is four two four two"),
      ]),
    );
    expect(second.intent).toBe("order_status");
    expect(second.text).toBe("Let me check order 4242.");
    expect(second.toolCall).toEqual({ name: "lookup_order", arguments: { order_id: "4242" } });
  });

  it("answers a tool result with the rule's after_tool, filled from the JSON result", () => {
    const d = decide(
      agent,
      req([
        say("order 5 5 1"),
        {
          role: "assistant",
          text: "Let me check order 551.",
          toolCalls: [{ id: "c9", name: "lookup_order", arguments: '{"order_id":"551"}' }],
        },
        { role: "tool", callId: "c9", content: '{"status":"ready for pickup"}' },
      ]),
    );
    expect(d.text).toBe("Order 551 is ready for pickup.");
  });

  it("transfers to a person and ends the call with goodbye, via tools when offered", () => {
    const human = decide(agent, req([say("can I speak to a real person")]));
    expect(human.toolCall).toEqual({
      name: "transfer_call",
      arguments: { reason: "caller asked for a person" },
    });
    expect(human.text).toBe("Sure, let me put you through to a person.");
    const bye = decide(agent, req([say("ok that's all, goodbye")]));
    expect(bye.toolCall?.name).toBe("end_call");
    expect(bye.text).toMatch(/Goodbye!$/);
    const noTool = decide(agent, req([say("can I speak to a real person")], []));
    expect(noTool.toolCall).toBeUndefined();
    expect(noTool.text).toMatch(/busy right now/);
  });

  it("normalizes spoken numbers and splits words for streaming", () => {
    expect(normalizeHeard("Order ONE two  Three")).toBe("order 1 2 3");
    expect(wordPieces("Hi there,  you.")).toEqual(["Hi", " there,", "  you."]);
    expect(wordPieces("Hi there,  you.").join("")).toBe("Hi there,  you.");
  });

  it("shapes JSON replies by a schema", () => {
    expect(JSON.parse(jsonReply("hi"))).toEqual({ reply: "hi" });
    const schema = {
      type: "object",
      properties: {
        a: { type: "string" },
        b: { type: "string" },
        n: { type: "number", minimum: 3 },
        e: { enum: ["x", "y"] },
        o: { type: "object", properties: { k: { type: "boolean" } } },
      },
    };
    expect(JSON.parse(jsonReply("hi", schema))).toEqual({ a: "hi", b: "", n: 3, e: "x", o: { k: false } });
  });
});

describe("agent files", () => {
  it("names the key of a mistake", () => {
    expect(() =>
      parseAgent("name: x\ngreeting: hi\nfallback: eh\nrules:\n  - intent: a\n    when: ['(']\n", "a.yaml"),
    ).toThrow(/a\.yaml: invalid scripted agent:\n {2}- rules\.0\.when\.0: not a valid regular expression/);
    expect(() =>
      parseAgent("name: x\ngreeting: hi\nfallback: eh\nrules: []\ncolour: red\n", "b.yaml"),
    ).toThrow(/colour/);
    expect(() => parseAgent("name: [", "c.yaml")).toThrow(/c\.yaml: not valid YAML/);
  });
});
