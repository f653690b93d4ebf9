// Handoff between agents on virtual time (#56): the model's handoff tool is offered only to an agent
// with handoffs; once the reply that hands the call on is heard, the same session goes on with the
// next agent — its prompt, its chat, its voice (the TTS sessions it opens), its line — carrying the
// conversation whole, as a digest, or not at all; the record names the handoff and who had each turn.
import { describe, expect, it } from "vitest";
import type { ChatMessage, ChatTool } from "../../src/api/types/index.ts";
import { VirtualClock } from "../../src/core/clock.ts";
import type { CallEvent, HandoffHistory } from "../../src/records/call-record.ts";
import type { CodeTool } from "../../src/session/code-tools.ts";
import { DEFAULT_SESSION_CONFIG, type SessionConfig } from "../../src/session/config.ts";
import type { ChatEvent, SessionServices, TtsStream } from "../../src/session/services.ts";
import { Harness } from "./harness.ts";

const SALES_PROMPT = "You are the sales desk.";

/** The sales agent: its own scripted chat (what it was asked), and TTS sessions in its own voice. */
class Sales {
  readonly requests: ChatMessage[][] = [];
  readonly toolLists: ChatTool[][] = [];
  readonly replies: string[] = [];
  /** The text each TTS session of this voice was sent. */
  readonly voiceTexts: string[] = [];
  resolved = 0;

  services(h: Harness): SessionServices {
    const sales = this;
    return {
      asr: {
        recognize: (pcm) => h.recognize(pcm.length),
        open: () => {
          let samples = 0;
          return {
            write: (pcm) => {
              samples += pcm.length;
            },
            end: () => h.recognize(samples),
            abort: () => {},
          };
        },
      },
      chat: {
        async *stream(messages, tools, signal): AsyncIterable<ChatEvent> {
          sales.requests.push([...messages]);
          sales.toolLists.push([...tools]);
          for (const word of (sales.replies.shift() ?? "Sales here.").split(/(?<= )/)) {
            await h.sleep(h.tokenMs);
            if (signal.aborted) return;
            yield { type: "text", text: word };
          }
        },
      },
      tts: {
        open: async (): Promise<TtsStream> => {
          const stream = await h.openTts();
          const at = sales.voiceTexts.push("") - 1;
          return {
            get closed() {
              return stream.closed;
            },
            events: stream.events,
            sendText: (text) => {
              sales.voiceTexts[at] += text;
              stream.sendText(text);
            },
            flush: () => stream.flush(),
            close: () => stream.close(),
          };
        },
      },
    };
  }

  /** What was said in this voice (the apology it keeps ready aside). */
  spoken(): string[] {
    const apology = DEFAULT_SESSION_CONFIG.apologyText;
    return this.voiceTexts.map((t) => t.trim()).filter((t) => t && t !== apology);
  }
}

interface Setup {
  history?: HandoffHistory;
  sales?: Partial<SessionConfig>;
  support?: Partial<SessionConfig>;
  /** The resolver knows no agent (a configuration changed under the call). */
  unknown?: boolean;
}

async function handedOff(s: Setup = {}): Promise<{ h: Harness; sales: Sales }> {
  const sales = new Sales();
  const salesConfig: SessionConfig = {
    ...DEFAULT_SESSION_CONFIG,
    agentName: "sales",
    systemPrompt: SALES_PROMPT,
    handoffLine: "This is sales, how can I help?",
    ...s.sales,
  };
  let h!: Harness;
  h = new Harness(
    new VirtualClock(),
    {
      agentName: "support",
      systemPrompt: "You are support.",
      handoffs: { agents: ["sales"], history: s.history ?? "whole" },
      ...s.support,
    },
    [],
    {
      handoff: (name) => {
        if (s.unknown || name !== "sales") return undefined;
        sales.resolved += 1;
        return { config: salesConfig, services: sales.services(h) };
      },
    },
  );
  h.start();
  await h.untilAgentSilent();
  h.asrAnswers = ["I would like to buy the premium plan"];
  h.chatReplies = [
    [
      { text: "Let me get you to sales." },
      { tool: { name: "handoff", arguments: '{"agent":"sales","reason":"wants to buy premium"}' } },
    ],
  ];
  await h.say(900);
  await h.untilAgentSilent();
  await h.run(300);
  await h.untilAgentSilent();
  return { h, sales };
}

const ofType = <T extends CallEvent["type"]>(h: Harness, type: T) =>
  h.events().filter((e): e is Extract<CallEvent, { type: T }> => e.type === type);

describe("handoff between agents", () => {
  it("offers the handoff tool only to an agent with handoffs, naming them", async () => {
    const plain = new Harness(new VirtualClock());
    plain.start();
    await plain.untilAgentSilent();
    plain.asrAnswers = ["hello"];
    await plain.say(900);
    await plain.untilAgentSilent();
    expect(plain.toolLists.at(-1)!.map((t) => t.function.name)).not.toContain("handoff");

    const { h } = await handedOff();
    const tool = h.toolLists[0]!.find((t) => t.function.name === "handoff");
    expect(tool?.function.parameters.properties.agent).toMatchObject({ enum: ["sales"] });
  });

  it("goes on with the next agent: its line in its voice, its prompt and chat, the whole conversation", async () => {
    const { h, sales } = await handedOff();
    // The first agent's words were heard before the handoff.
    const said = ofType(h, "assistant").map((e) => e.heard);
    expect(said).toContain("Let me get you to sales.");
    expect(ofType(h, "handoff")).toEqual([
      expect.objectContaining({
        from: "support",
        to: "sales",
        reason: "wants to buy premium",
        history: "whole",
      }),
    ]);
    // The line, in the sales voice, and not in the first agent's.
    expect(sales.spoken()).toEqual(["This is sales, how can I help?"]);
    const line = ofType(h, "assistant").at(-1)!;
    expect(line).toMatchObject({ heard: "This is sales, how can I help?", agent: "sales" });
    expect(ofType(h, "assistant").find((e) => e.heard === "Let me get you to sales.")?.agent).toBeUndefined();

    // The caller's next turn goes to the sales chat, with its prompt and the whole conversation.
    h.asrAnswers = ["how much is it"];
    sales.replies.push("It is ten dollars a month.");
    await h.say(900);
    await h.untilAgentSilent();
    const asked = sales.requests.at(-1)!;
    expect(asked[0]!.content).toMatch(/^You are the sales desk\./);
    expect(asked[0]!.content).toContain('Agent "support" handed this call to you: wants to buy premium');
    const words = asked.map((m) => (typeof m.content === "string" ? m.content : ""));
    expect(words).toContain("I would like to buy the premium plan");
    expect(words).toContain("This is sales, how can I help?");
    expect(words.at(-1)).toBe("how much is it");
    // The sales agent has no handoffs: no handoff tool.
    expect(sales.toolLists.at(-1)!.map((t) => t.function.name)).not.toContain("handoff");
    expect(sales.spoken()).toContain("It is ten dollars a month.");
    expect(ofType(h, "user").at(-1)).toMatchObject({ text: "how much is it", agent: "sales" });
    expect(ofType(h, "user")[0]!.agent).toBeUndefined();
    expect(sales.resolved).toBe(1);
  });

  it("carries a digest of the conversation when the history is summary", async () => {
    const { h, sales } = await handedOff({ history: "summary" });
    h.asrAnswers = ["how much is it"];
    await h.say(900);
    await h.untilAgentSilent();
    const asked = sales.requests.at(-1)!;
    const digest = asked.find((m, i) => i > 0 && m.role === "system");
    expect(digest?.content).toContain("Caller: I would like to buy the premium plan");
    expect(digest?.content).toContain("Agent: Let me get you to sales.");
    // The earlier turns are in the digest only; the turns since the handoff are whole.
    expect(asked.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["how much is it"]);
    expect(asked.some((m) => m.role === "tool")).toBe(false);
    expect(ofType(h, "handoff")[0]).toMatchObject({ history: "summary" });
  });

  it("carries nothing when the history is none", async () => {
    const { h, sales } = await handedOff({ history: "none" });
    h.asrAnswers = ["how much is it"];
    await h.say(900);
    await h.untilAgentSilent();
    const asked = sales.requests.at(-1)!;
    expect(asked.map((m) => m.role)).toEqual(["system", "assistant", "user"]);
    expect(asked.map((m) => m.content).slice(1)).toEqual([
      "This is sales, how can I help?",
      "how much is it",
    ]);
  });

  it("without a line or a greeting, the next agent's model speaks first with the conversation", async () => {
    const sales = { handoffLine: undefined, greeting: undefined };
    const { h, sales: s } = await handedOff({ sales });
    expect(s.requests).toHaveLength(1);
    const words = s.requests[0]!.map((m) => (typeof m.content === "string" ? m.content : ""));
    expect(words).toContain("I would like to buy the premium plan");
    expect(s.spoken()).toEqual(["Sales here."]);
    expect(ofType(h, "assistant").at(-1)).toMatchObject({ heard: "Sales here.", agent: "sales" });

    // With a greeting and no line, the greeting is the line.
    const greeted = await handedOff({ sales: { handoffLine: undefined, greeting: "Sales, hello." } });
    expect(greeted.sales.spoken()).toEqual(["Sales, hello."]);
    expect(greeted.sales.requests).toHaveLength(0);
  });

  it("tells the model when the agent cannot be had, and the first agent goes on", async () => {
    const { h, sales } = await handedOff({ unknown: true });
    expect(sales.resolved).toBe(0);
    expect(ofType(h, "handoff")).toEqual([]);
    expect(ofType(h, "note").map((n) => n.text)).toContain(
      "the handoff to sales failed: there is no such agent on this bridge",
    );
    // The first agent's chat was asked again, told of the failure.
    const last = h.chatRequests.at(-1)!.at(-1);
    expect(last?.content).toMatch(/handoff to sales failed/);
  });

  it("lets a code tool hand the call on, only to the agent's handoffs", async () => {
    const passOn: CodeTool = {
      name: "route_caller",
      description: "routes the caller",
      parameters: { type: "object", properties: { to: { type: "string" } } },
      run: (args, ctx) => {
        ctx.handoff((args as { to: string }).to, "asked for by code");
        return "routing";
      },
    };
    // The tool names an agent outside the handoffs: the model reads why not.
    const other = new Harness(
      new VirtualClock(),
      { codeTools: [passOn], handoffs: { agents: ["sales"], history: "whole" } },
      [],
      { handoff: () => undefined },
    );
    other.start();
    await other.untilAgentSilent();
    other.asrAnswers = ["billing please"];
    other.chatReplies = [
      [{ tool: { name: "route_caller", arguments: '{"to":"billing"}' } }],
      [{ text: "I cannot do that." }],
    ];
    await other.say(900);
    await other.untilAgentSilent();
    const result = other.chatRequests.at(-1)!.at(-1);
    expect(result).toMatchObject({ role: "tool" });
    expect(result?.content).toMatch(/cannot hand the call to billing; the agents are: sales/);

    // The code tool's handoff to sales, taken.
    const byCode = await handedOffByCode(passOn);
    expect(ofType(byCode.h, "handoff")[0]).toMatchObject({ to: "sales", reason: "asked for by code" });
    expect(byCode.sales.spoken()).toEqual(["This is sales, how can I help?"]);
  });
});

async function handedOffByCode(tool: CodeTool): Promise<{ h: Harness; sales: Sales }> {
  const sales = new Sales();
  let h!: Harness;
  h = new Harness(
    new VirtualClock(),
    { agentName: "support", codeTools: [tool], handoffs: { agents: ["sales"], history: "whole" } },
    [],
    {
      handoff: () => ({
        config: {
          ...DEFAULT_SESSION_CONFIG,
          agentName: "sales",
          handoffLine: "This is sales, how can I help?",
        },
        services: sales.services(h),
      }),
    },
  );
  h.start();
  await h.untilAgentSilent();
  h.asrAnswers = ["sales please"];
  h.chatReplies = [
    [{ text: "One moment." }, { tool: { name: "route_caller", arguments: '{"to":"sales"}' } }],
  ];
  await h.say(900);
  await h.untilAgentSilent();
  await h.run(300);
  await h.untilAgentSilent();
  return { h, sales };
}
