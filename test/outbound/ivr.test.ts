// A phone menu answering an outbound call: a machine whose greeting ends in silence, not a beep,
// goes to the agent in menu mode when it has an `ivr` goal; a voicemail (its beep) still gets the
// message or the hang-up; the menu agent listens first, with the goal in its prompt.
import { describe, expect, it } from "vitest";
import { concatPcm } from "../../codecs/pcm.ts";
import type { CallAgent } from "../../src/agents/call-agent.ts";
import { sessionConfigOf } from "../../src/agents/call-agent.ts";
import { TemplateRenderer } from "../../src/agents/templates.ts";
import { agentSchema } from "../../src/config/agent.ts";
import { silentLogger } from "../../src/core/log.ts";
import { AnsweredCall } from "../../src/outbound/answered-call.ts";
import { ivrAgent } from "../../src/outbound/ivr.ts";
import type { CallEvent } from "../../src/records/call-record.ts";
import type { CallTransport, TransportListener } from "../../src/session/transport.ts";
import { silence, speak } from "../helpers/speech.ts";

const RATE = 8000;

function beep(ms: number): Int16Array {
  const out = new Int16Array((ms * RATE) / 1000);
  for (let i = 0; i < out.length; i++) out[i] = Math.round(7000 * Math.sin((2 * Math.PI * 1000 * i) / RATE));
  return out;
}

const MENU = speak(
  "Thank you for calling Acme Pharmacy. For prescription refills, press one. For store hours, press two.",
  { rate: RATE },
);

/** An answered outbound call whose callee plays `pcm`; what the call did with it. */
function answer(pcm: Int16Array, opts: { policy: "message" | "hangup"; ivr: boolean }) {
  let listener: TransportListener | undefined;
  const hangUps: string[] = [];
  const transport: CallTransport = {
    info: { callId: "out-ivr", transport: "test", params: {} },
    inputRate: RATE,
    output: { kind: "pcm", rate: RATE },
    attach: (l) => {
      listener = l;
    },
    play: () => {},
    clear: () => {},
    queuedMs: () => 0,
    playedMs: () => 0,
    hangUp: async (reason) => {
      hangUps.push(reason);
    },
    transfer: async () => {},
  };
  const got = { sessions: 0, menus: 0, hangUps, records: [] as CallEvent[], synthesized: 0 };
  new AnsweredCall({
    transport,
    policy: opts.policy,
    byCarrier: false,
    message: "Hello, this is Acme.",
    synthesize: async () => {
      got.synthesized++;
      return [new Int16Array(160)];
    },
    record: (e) => got.records.push(e),
    dialled: () => {},
    startSession: () => {
      got.sessions++;
    },
    ...(opts.ivr
      ? {
          startIvr: (gate: CallTransport) => {
            got.menus++;
            expect(gate.info.callId).toBe("out-ivr");
          },
        }
      : {}),
    ended: () => {},
    log: silentLogger,
  });
  for (let i = 0; i + 160 <= pcm.length; i += 160) listener!.audio(pcm.slice(i, i + 160));
  return got;
}

describe("a phone menu answering an outbound call", () => {
  it("goes to the agent in menu mode when its greeting ends without a beep, whatever the policy", () => {
    for (const policy of ["message", "hangup"] as const) {
      const got = answer(concatPcm([silence(300, RATE), MENU, silence(3000, RATE)]), { policy, ivr: true });
      expect(got).toMatchObject({ sessions: 0, menus: 1, hangUps: [] });
      expect(got.records.some((e) => e.type === "note" && e.text.startsWith("phone menu answered"))).toBe(
        true,
      );
    }
  });

  it("leaves a voicemail that beeps to the policy, ivr or not", async () => {
    const voicemail = concatPcm([
      silence(300, RATE),
      MENU,
      silence(500, RATE),
      beep(500),
      silence(3000, RATE),
    ]);
    const hungUp = answer(voicemail, { policy: "hangup", ivr: true });
    expect(hungUp).toMatchObject({ menus: 0, hangUps: ["agent: answering machine, hung up"] });
    const messaged = answer(voicemail, { policy: "message", ivr: true });
    expect(messaged.menus).toBe(0);
    expect(messaged.synthesized).toBe(1);
    // Without a goal, a machine with no beep is a voicemail as before.
    const plain = answer(concatPcm([silence(300, RATE), MENU, silence(3000, RATE)]), {
      policy: "hangup",
      ivr: false,
    });
    expect(plain).toMatchObject({ menus: 0, hangUps: ["agent: answering machine, hung up"] });
  });

  it("the menu agent listens first, with its goal (variables filled) in its prompt", () => {
    const settings = agentSchema.parse({
      greeting: "Hello!",
      systemPrompt: "You call pharmacies for Ada.",
      ivr: { goal: "refill prescription {{var.rx}}" },
    });
    const t = new TemplateRenderer(
      { transport: "sip", params: {}, vars: { rx: "RX-42" }, now: "Monday" },
      () => {},
    );
    const agent = { name: "refills", session: sessionConfigOf(settings, t) } as CallAgent;
    const menu = ivrAgent(agent)!;
    expect(menu.session.greeting).toBeUndefined();
    expect(menu.session.listenFirst).toBe(true);
    expect(menu.session.systemPrompt).toMatch(/^You call pharmacies for Ada\./);
    expect(menu.session.systemPrompt).toContain("Your goal in it: refill prescription RX-42.");
    expect(menu.session.systemPrompt).toContain("send_dtmf");
    expect(ivrAgent({ ...agent, session: sessionConfigOf(agentSchema.parse({})) })).toBeUndefined();
  });

  it("refuses an ivr option without a goal, naming the field", () => {
    const r = agentSchema.safeParse({ ivr: {} });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.path).toEqual(["ivr", "goal"]);
    expect(r.error?.issues[0]?.message).toMatch(/what the agent is after in the menu/);
  });
});
