// The agent's keypad on virtual time: the real CallSession with scripted services, the model
// pressing keys through send_dtmf, on a transport that takes tones in its audio and on one that
// signals digits itself; what the far end gets is read back with the project's DTMF detector.
import { describe, expect, it } from "vitest";
import { detectDtmf } from "../../codecs/dtmf-detector.ts";
import { concatPcm } from "../../codecs/pcm.ts";
import { VirtualClock } from "../../src/core/clock.ts";
import { checkDigits, SEND_DTMF_NAME } from "../../src/session/dtmf-out.ts";
import type { AgentAudio, CallTransport, DtmfOut, TransportListener } from "../../src/session/transport.ts";
import { Harness, RATE, type VirtualTransport } from "./harness.ts";

/** The harness's transport with a keypad: made before the session, it hands everything to it. */
class KeypadTransport implements CallTransport {
  inner!: VirtualTransport;
  readonly info = { callId: "CA-test", transport: "test" as const, params: {} };
  readonly inputRate = 16000;
  readonly output = { kind: "pcm", rate: RATE } as const;
  readonly dtmfOut: DtmfOut;
  constructor(dtmfOut: DtmfOut) {
    this.dtmfOut = dtmfOut;
  }
  attach(l: TransportListener): void {
    this.inner.attach(l);
  }
  play(a: AgentAudio): void {
    this.inner.play(a);
  }
  clear(): void {
    this.inner.clear();
  }
  queuedMs(): number {
    return this.inner.queuedMs();
  }
  playedMs(): number {
    return this.inner.playedMs();
  }
  hangUp(reason: string): Promise<void> {
    return this.inner.hangUp(reason);
  }
  transfer(target: string): Promise<void> {
    return this.inner.transfer(target);
  }
}

async function keypadCall(dtmfOut: DtmfOut): Promise<Harness> {
  const keypad = new KeypadTransport(dtmfOut);
  const h = new Harness(new VirtualClock(), {}, [], { transport: keypad });
  keypad.inner = h.transport;
  h.start();
  await h.untilAgentSilent();
  return h;
}

const press = (digits: string) => ({ tool: { name: SEND_DTMF_NAME, arguments: JSON.stringify({ digits }) } });

describe("send_dtmf", () => {
  it("is offered only where the transport carries digits, and checks the keys", async () => {
    const toolsOffered = async (h: Harness) => {
      h.asrAnswers = ["hello"];
      await h.say(900);
      await h.untilAgentSilent();
      return h.toolLists.at(-1)?.map((t) => t.function.name);
    };
    const plain = new Harness(new VirtualClock());
    plain.start();
    await plain.untilAgentSilent();
    expect(await toolsOffered(plain)).toEqual(["end_call"]);
    expect(await toolsOffered(await keypadCall({ kind: "tones" }))).toEqual(["end_call", SEND_DTMF_NAME]);
    expect(checkDigits("1 2-3#")).toEqual({ digits: "123#" });
    expect(checkDigits("12W*a")).toEqual({ digits: "12w*A" });
    expect(checkDigits("1x")).toEqual({ error: expect.stringContaining('"x" is not a key') });
    expect(checkDigits("ww")).toEqual({ error: expect.stringContaining("no key") });
    expect(checkDigits(5)).toEqual({ error: expect.stringContaining("give the keys") });
  });

  it("plays the keys as tones after the agent's words, and the call goes on", async () => {
    const h = await keypadCall({ kind: "tones" });
    h.asrAnswers = ["for sales press one for support press two"];
    h.chatReplies = [[{ text: "Okay." }, press("2w#")], [{ text: "Hello, I am calling about an order." }]];
    const before = h.transport.played.length;
    await h.say(1500);
    await h.untilAgentSilent();
    await h.run(1500);
    const after = concatPcm(h.transport.played.slice(before));
    expect(detectDtmf(after, RATE)).toBe("2#");
    // The keys came after the words: the tone audio is the last piece played.
    const keys = h.transport.played.at(-1)!;
    expect(detectDtmf(keys, RATE)).toBe("2#");
    expect(keys.length).toBe(((100 + 100) * 2 + 500) * (RATE / 1000));
    expect(h.events().some((e) => e.type === "note" && e.text === "agent pressed 2w#")).toBe(true);
    expect(h.ended).toBeUndefined();
    // The call goes on: the menu's next words get an answer.
    h.asrAnswers = ["please state your business"];
    await h.say(1200);
    await h.untilAgentSilent();
    expect(h.historyOf("assistant").at(-1)).toBe("Hello, I am calling about an order.");
  });

  it("sends each key through a transport's own signal, waiting between keys", async () => {
    const sent: Array<{ key: string; at: number }> = [];
    let clock!: VirtualClock;
    const h = await keypadCall({
      kind: "signal",
      send: async (key, toneMs) => {
        expect(toneMs).toBe(100);
        sent.push({ key, at: clock.now() });
      },
    });
    clock = h.clock;
    h.asrAnswers = ["enter your account number"];
    h.chatReplies = [[press("12w3")]];
    await h.say(1200);
    await h.untilAgentSilent();
    await h.run(1500);
    expect(sent.map((s) => s.key).join("")).toBe("123");
    expect(sent[1]!.at - sent[0]!.at).toBe(100);
    expect(sent[2]!.at - sent[1]!.at).toBe(600);
  });

  it("tells the model what is wrong with the keys it asked for", async () => {
    const h = await keypadCall({ kind: "tones" });
    h.asrAnswers = ["press one"];
    h.chatReplies = [[press("one")], [{ text: "Sorry." }]];
    await h.say(900);
    await h.untilAgentSilent();
    const tool = h.chatRequests.at(-1)!.find((m) => m.role === "tool");
    expect(tool?.content).toContain('"o" is not a key');
  });
});
