// Warm transfer on virtual time: the real CallSession with scripted services, a scripted person's
// call (a second virtual transport) behind the DialPerson port. Hold audio while it rings, the
// brief to the person, the join on 1 and the relay both ways; busy, no answer, a decline and the
// caller's hang-up each taking the call back (or ending it) as they should; a spoken yes or no
// (scripted recognition of the person's words) deciding as the keys do; the record's entry for
// each transfer and the person's leg; after a handoff, the agent having the call does the transfer.
import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../src/api/types/index.ts";
import { VirtualClock } from "../../src/core/clock.ts";
import { type CallRecord, recordFromEvents } from "../../src/records/call-record.ts";
import { DEFAULT_SESSION_CONFIG, type SessionConfig } from "../../src/session/config.ts";
import { holdTone } from "../../src/session/hold-audio.ts";
import type { ChatEvent, SessionServices } from "../../src/session/services.ts";
import type { DialPerson, NativeJoin, PersonLeg } from "../../src/session/transport.ts";
import { AMD_ALLOWANCE_MS, DECISION_MS, PersonNotReached } from "../../src/session/warm-transfer.ts";
import { Harness, VirtualTransport } from "./harness.ts";

const TARGET = "sip:desk@example.com";

interface Dialled {
  at: number;
  target: string;
  ringTimeoutS: number;
  signal: AbortSignal;
}

/** A session whose agent may transfer warm, with a person's call the test answers or fails. */
async function warmCall(
  config: Partial<SessionConfig> = {},
  deps: ConstructorParameters<typeof Harness>[3] = {},
) {
  const clock = new VirtualClock();
  const dialled: Dialled[] = [];
  let answer: ((leg: PersonLeg) => void) | undefined;
  let fail: ((e: Error) => void) | undefined;
  const dialPerson: DialPerson = (target, opts) => {
    dialled.push({ at: clock.now(), target, ringTimeoutS: opts.ringTimeoutS, signal: opts.signal });
    return new Promise<PersonLeg>((resolve, reject) => {
      answer = resolve;
      fail = reject;
    });
  };
  const h = new Harness(
    clock,
    {
      transferTarget: TARGET,
      transferMode: "warm",
      warmTransfer: { answerMs: 20_000, holdLine: "One moment please." },
      ...config,
    },
    [],
    { dialPerson, ...deps },
  );
  h.start();
  await h.untilAgentSilent();
  const leg = new VirtualTransport(clock);
  return {
    h,
    dialled,
    leg,
    answer: (join?: PersonLeg["join"]) => answer!({ transport: leg, who: TARGET, ...(join ? { join } : {}) }),
    fail: (e: Error) => fail!(e),
  };
}

/** The caller asks for a person; the model says so, then calls transfer_call (its summary comes next). */
async function askForPerson(h: Harness, args = "{}"): Promise<void> {
  h.asrAnswers = ["a person please"];
  h.chatReplies = [
    [{ text: "Let me get someone." }, { tool: { name: "transfer_call", arguments: args } }],
    [{ text: "The caller wants a person." }],
  ];
  await h.say(900);
  for (let t = 0; t < 5000 && !h.transport.hangups.length && !h.events().some(isCalling); t += 20)
    await h.run(20);
}

/** The call's record as GET /calls/:id gives it. */
const recordOf = (h: Harness): CallRecord => recordFromEvents(h.events())!;

/**
 * The person says something (the scripted recognizer hears `words`): their detector (the second the
 * session made, after the caller's) reports speech over audio fed on their leg.
 */
async function personSays(h: Harness, leg: VirtualTransport, words: string): Promise<void> {
  h.asrAnswers = [words];
  // The detector reports the session's stream positions; the person's leg is fed up to them.
  const at = h.startSpeaking(1);
  for (let ms = 0; ms < at + 800; ms += 20) leg.listener.audio(new Int16Array(320).fill(3000));
  await h.stopSpeaking(1, at + 600);
  await h.run(300);
}

/** Runs until the person has heard the whole brief (their line's playout follows the clock). */
async function untilBriefHeard(h: Harness, leg: VirtualTransport): Promise<void> {
  const heard = () => h.logLines("warm transfer: the brief was heard; waiting for the person's key").length;
  for (let t = 0; t < 20_000 && !heard(); t += 100) {
    await h.run(100);
    leg.tick();
  }
  expect(heard()).toBe(1);
}

const isCalling = (e: { type: string; text?: string }) =>
  e.type === "note" && !!e.text?.endsWith(": calling");

function heard(pieces: readonly Int16Array[], want: (pcm: Int16Array) => boolean): boolean {
  return pieces.some(want);
}

const tone = holdTone(8000);
/** A 100 ms piece of the default hold loop, with sound in it (the loop is a whole number of pieces). */
function isHoldPiece(pcm: Int16Array): boolean {
  if (pcm.length !== 800 || pcm.every((v) => v === 0)) return false;
  for (let k = 0; k < tone.length; k += 800) if (pcm.every((v, i) => v === tone[k + i])) return true;
  return false;
}

describe("warm transfer", () => {
  it("offers the mode to the model only when warm transfers are allowed", async () => {
    const { h } = await warmCall();
    await askForPerson(h);
    const tool = h.toolLists[0]!.find((t) => t.function.name === "transfer_call");
    expect(Object.keys(tool!.function.parameters.properties ?? {})).toEqual(["target", "mode", "brief"]);
    const blind = await warmCall({ transferMode: "blind" });
    await askForPerson(blind.h);
    const plain = blind.h.toolLists[0]!.find((t) => t.function.name === "transfer_call");
    expect(Object.keys(plain!.function.parameters.properties ?? {})).toEqual(["target"]);
  });

  it("holds the caller, briefs the person, joins them on 1 and relays both ways", async () => {
    const { h, dialled, leg, answer } = await warmCall();
    await askForPerson(h);
    expect(dialled.map((d) => [d.target, d.ringTimeoutS])).toEqual([[TARGET, 20]]);
    // The hold line, then the loop: the caller's line never runs dry while it rings.
    await h.run(1500);
    expect(h.historyOf("assistant").at(-1)).toBe("One moment please.");
    const before = h.transport.played.length;
    let dry = 0;
    for (let t = 0; t < 3000; t += 100) {
      await h.run(100);
      if (!h.transport.agentSpeaking) dry += 1;
    }
    expect(dry).toBe(0);
    expect(heard(h.transport.played.slice(before), isHoldPiece)).toBe(true);

    answer();
    await h.run(200);
    // The brief: the model's summary of the call, then the question.
    const brief = h.ttsSessions.map((s) => s.text).find((t) => t.includes("press 1"));
    expect(brief).toContain("The caller wants a person.");
    expect(leg.played.length).toBeGreaterThan(0);
    expect(h.chatRequests.at(-1)![1]!.content).toContain("Caller: a person please");

    leg.listener.dtmf("1");
    await h.run(100);
    expect(h.transport.clearTimes.length).toBeGreaterThan(0);
    // Joined: the caller's audio reaches the person, the person's the caller.
    const legBefore = leg.played.length;
    h.callerAudio = () => new Int16Array(320).fill(5000);
    await h.run(200);
    expect(leg.played.slice(legBefore).some((p) => p.some((v) => Math.abs(v - 5000) < 50))).toBe(true);
    const callerBefore = h.transport.played.length;
    for (let i = 0; i < 10; i++) leg.listener.audio(new Int16Array(320).fill(-7000));
    expect(h.transport.played.slice(callerBefore).some((p) => p.some((v) => Math.abs(v + 7000) < 50))).toBe(
      true,
    );
    const notes = h.events().flatMap((e) => (e.type === "note" ? [e.text] : []));
    expect(notes).toContain(`warm transfer to ${TARGET}: taken by ${TARGET}; caller and person joined`);
    // No re-prompt, no agent turn while they talk.
    const turns = h.chatRequests.length;
    await h.run(12_000);
    expect(h.chatRequests.length).toBe(turns);
    expect(h.ended).toBeUndefined();

    leg.listener.ended("BYE");
    await h.run(100);
    expect(h.ended?.outcome).toBe("transferred");
    expect(h.ended?.reason).toContain("the person hung up");
    expect(h.transport.hangups).toEqual(["the person hung up"]);
    // The record: who took the call, and the person's leg (its end is the call's).
    const record = recordOf(h);
    expect(record.takenBy).toBe(TARGET);
    const [tried] = record.warmTransfers!;
    expect(tried).toMatchObject({ target: TARGET, outcome: "joined", leg: { id: "CA-test", who: TARGET } });
    expect(tried!.leg!.answeredAt <= tried!.leg!.joinedAt!).toBe(true);
    expect(tried!.leg!.endedAt).toBe(record.endedAt);
  });

  it("on 1 has the carrier join the calls and leaves them; a carrier that cannot join gets the relay", async () => {
    const { h, leg, answer } = await warmCall();
    await askForPerson(h);
    await h.run(1500);
    let joined: ((how: NativeJoin) => void) | undefined;
    answer(() => new Promise<NativeJoin>((resolve) => (joined = resolve)));
    await h.run(200);
    leg.listener.dtmf("1");
    await h.run(100);
    // Joining: the media of both calls ends here (the carrier's doing), and nothing is relayed.
    expect(joined).toBeDefined();
    const legBefore = leg.played.length;
    h.callerAudio = () => new Int16Array(320).fill(5000);
    await h.run(200);
    expect(leg.played.length).toBe(legBefore);
    leg.listener.ended("stream stopped");
    h.transport.listener.ended("stream stopped");
    joined!({ kind: "joined" });
    await h.run(100);
    expect(h.ended?.outcome).toBe("transferred");
    expect(h.ended?.reason).toContain(`taken by ${TARGET}`);
    // The bridge hangs up neither: the carrier has both.
    expect(h.transport.hangups).toEqual([]);
    expect(leg.hangups).toEqual([]);
    const record = recordOf(h);
    expect(record.takenBy).toBe(TARGET);
    expect(record.warmTransfers).toEqual([expect.objectContaining({ outcome: "joined" })]);
    const times = record.warmTransfers![0]!.leg!;
    expect(times.joinedAt! <= times.endedAt!).toBe(true);
    const notes = record.events.flatMap((e) => (e.type === "note" ? [e.text] : []));
    expect(notes).toContain(`warm transfer to ${TARGET}: taken by ${TARGET}; caller and person joined`);

    const fallback = await warmCall();
    await askForPerson(fallback.h);
    await fallback.h.run(1500);
    fallback.answer(() => Promise.reject(new Error("HTTP 503")));
    await fallback.h.run(200);
    fallback.leg.listener.dtmf("1");
    await fallback.h.run(100);
    expect(
      fallback.h.logLines("warm transfer: the carrier could not join the calls; the bridge relays them"),
    ).toEqual([expect.objectContaining({ why: "HTTP 503" })]);
    const before = fallback.leg.played.length;
    fallback.h.callerAudio = () => new Int16Array(320).fill(5000);
    await fallback.h.run(200);
    expect(fallback.leg.played.slice(before).some((p) => p.some((v) => Math.abs(v - 5000) < 50))).toBe(true);
    expect(fallback.h.ended).toBeUndefined();
  });

  it("comes back to the caller when the person is busy", async () => {
    const { h, fail } = await warmCall();
    await askForPerson(h);
    await h.run(1500);
    h.chatReplies = [[{ text: "The desk is busy, can I help instead?" }]];
    fail(new PersonNotReached("busy", "486 Busy Here"));
    await h.run(100);
    await h.untilAgentSilent(5000);
    const system = h.chatRequests.at(-1)!.at(-1)!.content;
    expect(system).toContain(`(system: the call to ${TARGET} failed: ${TARGET} is busy (486 Busy Here)`);
    expect(h.historyOf("assistant").at(-1)).toBe("The desk is busy, can I help instead?");
    expect(h.ended).toBeUndefined();
    expect(recordOf(h).warmTransfers).toEqual([
      expect.objectContaining({ outcome: "busy", why: `${TARGET} is busy (486 Busy Here)` }),
    ]);
    expect(recordOf(h).warmTransfers![0]!.leg).toBeUndefined();
    expect(recordOf(h).takenBy).toBeUndefined();
    // The agent listens again.
    h.asrAnswers = ["yes please"];
    h.chatReplies = [[{ text: "Sure." }]];
    await h.say(600);
    await h.untilAgentSilent(5000);
    expect(h.historyOf("user").at(-1)).toBe("yes please");
  });

  it("gives up on a person who never answers and takes the call back", async () => {
    const { h, dialled } = await warmCall();
    await askForPerson(h);
    h.chatReplies = [[{ text: "Nobody is answering." }]];
    const deadline = dialled[0]!.at + 20_000 + AMD_ALLOWANCE_MS;
    await h.run(deadline - h.clock.now() - 100);
    expect(dialled[0]!.signal.aborted).toBe(false);
    await h.run(200);
    expect(dialled[0]!.signal.aborted).toBe(true);
    await h.untilAgentSilent(5000);
    expect(h.chatRequests.at(-1)!.at(-1)!.content).toContain(`${TARGET} did not answer`);
    expect(h.historyOf("assistant").at(-1)).toBe("Nobody is answering.");
  });

  it("comes back when the person declines with 2, and hangs up on them", async () => {
    const { h, leg, answer } = await warmCall({
      warmTransfer: { answerMs: 20_000, brief: "Jane needs help with a refund." },
    });
    await askForPerson(h);
    h.chatReplies = [[{ text: "They cannot take it right now." }]];
    answer();
    await h.run(300);
    // The operator's brief: no summary asked of the model.
    expect(h.ttsSessions.map((s) => s.text).join(" ")).toContain(
      "Jane needs help with a refund. Say yes or press 1",
    );
    leg.listener.dtmf("2");
    await h.run(100);
    await h.untilAgentSilent(5000);
    expect(leg.hangups).toEqual(["transfer decline"]);
    expect(h.chatRequests.at(-1)!.at(-1)!.content).toContain(`${TARGET} declined the call`);
    expect(h.historyOf("assistant").at(-1)).toBe("They cannot take it right now.");
    const [tried] = recordOf(h).warmTransfers!;
    expect(tried).toMatchObject({ outcome: "declined", leg: { who: TARGET } });
    expect(tried!.leg!.endedAt).toBeDefined();
    expect(tried!.leg!.joinedAt).toBeUndefined();
  });

  it("joins them when the person says yes after the brief, the keypad still there", async () => {
    const { h, leg, answer } = await warmCall();
    await askForPerson(h);
    answer();
    for (let t = 0; t < 5000 && !leg.played.length; t += 20) await h.run(20);
    // During the brief nothing is heard: its own echo asks for a yes and a no.
    await personSays(h, leg, "yes");
    expect(h.asrAnswers).toEqual(["yes"]);
    await untilBriefHeard(h, leg);
    // Words that are neither yes nor no change nothing.
    await personSays(h, leg, "Hello? Who is this?");
    expect(recordOf(h).warmTransfers).toBeUndefined();
    await personSays(h, leg, "Yeah, sure, put them through.");
    expect(h.transport.clearTimes.length).toBeGreaterThan(0);
    expect(recordOf(h).warmTransfers).toEqual([expect.objectContaining({ outcome: "joined" })]);
    expect(h.logLines("warm transfer: the person answered by voice")).toEqual([
      expect.objectContaining({ answer: "accept", words: "Yeah, sure, put them through." }),
    ]);
    // A key after the decision changes nothing: the two stay joined.
    leg.listener.dtmf("2");
    await h.run(100);
    expect(leg.hangups).toEqual([]);
  });

  it("comes back when the person says no", async () => {
    const { h, leg, answer } = await warmCall();
    await askForPerson(h);
    h.chatReplies = [[{ text: "They cannot take it." }]];
    answer();
    await untilBriefHeard(h, leg);
    await personSays(h, leg, "No, sorry, not now.");
    await h.untilAgentSilent(5000);
    expect(leg.hangups).toEqual(["transfer decline"]);
    expect(h.historyOf("assistant").at(-1)).toBe("They cannot take it.");
    expect(recordOf(h).warmTransfers).toEqual([expect.objectContaining({ outcome: "declined" })]);
  });

  it("hangs up on the person when the caller goes during the brief", async () => {
    const { h, leg, answer } = await warmCall();
    await askForPerson(h);
    answer();
    await h.run(1500);
    expect(leg.played.length).toBeGreaterThan(0);
    h.transport.listener.ended("BYE");
    await h.run(100);
    expect(h.ended?.outcome).toBe("caller_hangup");
    expect(leg.hangups).toEqual(["the call ended"]);
    // Recorded before the call's end, the person's leg ended with it.
    expect(
      h
        .events()
        .map((e) => e.type)
        .slice(-2),
    ).toEqual(["warm-transfer", "call-end"]);
    const [tried] = recordOf(h).warmTransfers!;
    expect(tried).toMatchObject({ outcome: "canceled", why: "the call ended first", leg: { who: TARGET } });
    expect(tried!.leg!.endedAt).toBeDefined();
  });

  it("after the join, the caller's hang-up ends the call as transferred and hangs up on the person", async () => {
    const { h, leg, answer } = await warmCall();
    await askForPerson(h);
    answer();
    await h.run(1500);
    leg.listener.dtmf("1");
    await h.run(100);
    h.transport.listener.ended("BYE");
    await h.run(100);
    expect(h.ended).toEqual({
      outcome: "transferred",
      reason: `warm transfer to ${TARGET} (taken by ${TARGET}): BYE`,
    });
    expect(leg.hangups).toEqual(["the call ended"]);
  });

  it("takes the call back when the person answers but presses nothing", async () => {
    const { h, leg, answer } = await warmCall();
    await askForPerson(h);
    h.chatReplies = [[{ text: "Nobody could take it." }]];
    answer();
    await h.run(1500);
    const briefLeftMs = leg.queuedMs() - leg.playedMs();
    await h.run(briefLeftMs + DECISION_MS - 200);
    expect(leg.hangups).toEqual([]);
    await h.run(400);
    expect(leg.hangups).toEqual(["transfer no-decision"]);
    await h.untilAgentSilent(5000);
    expect(h.chatRequests.at(-1)!.at(-1)!.content).toContain("answered but did not take the call");
    expect(h.historyOf("assistant").at(-1)).toBe("Nobody could take it.");
  });

  it("stays blind when the model asks for it", async () => {
    const { h, dialled } = await warmCall();
    await askForPerson(h, '{"mode":"blind"}');
    await h.run(300);
    expect(dialled).toEqual([]);
    expect(h.transport.transfers).toEqual([TARGET]);
  });
});

describe("transfer({ to, mode, brief }) in code tools", () => {
  it("places a warm transfer with the tool's brief, whatever the agent's default mode", async () => {
    const { h, dialled, answer } = await warmCall({
      transferMode: "blind",
      codeTools: [
        {
          name: "call_billing",
          description: "Puts the caller through to billing",
          parameters: { type: "object", properties: {} },
          run: (_args, ctx) => {
            ctx.transfer({
              to: "sip:billing@example.com",
              mode: "warm",
              brief: "Ada asks about invoice 42.",
            });
            return "putting you through";
          },
        },
      ],
    });
    h.asrAnswers = ["billing please"];
    h.chatReplies = [[{ tool: { name: "call_billing", arguments: "{}" } }]];
    await h.say(900);
    for (let t = 0; t < 5000 && dialled.length === 0; t += 20) await h.run(20);
    expect(dialled.map((d) => d.target)).toEqual(["sip:billing@example.com"]);
    answer();
    await h.run(1500);
    expect(h.ttsSessions.map((s) => s.text).join(" ")).toContain(
      "Ada asks about invoice 42. Say yes or press 1",
    );
    expect(h.transport.transfers).toEqual([]);
  });
});

/** A second agent with its own chat and voice, and a warm transfer of its own. */
class Billing {
  readonly chats: ChatMessage[][] = [];
  /** Its model's replies, in order; then a summary of the call. */
  readonly replies: ChatEvent[][] = [];
  /** The text each TTS session of this voice was sent. */
  readonly voice: string[] = [];

  services(h: Harness): SessionServices {
    const billing = this;
    return {
      asr: {
        recognize: (pcm) => h.recognize(pcm.length),
        open: () => ({ write() {}, end: () => h.recognize(0), abort() {} }),
      },
      chat: {
        async *stream(messages): AsyncIterable<ChatEvent> {
          billing.chats.push([...messages]);
          for (const e of billing.replies.shift() ?? [{ type: "text", text: "The caller owes nothing." }])
            yield e;
        },
      },
      tts: {
        open: async () => {
          const stream = await h.openTts();
          const at = billing.voice.push("") - 1;
          return {
            get closed() {
              return stream.closed;
            },
            events: stream.events,
            sendText: (text) => {
              billing.voice[at] += text;
              stream.sendText(text);
            },
            flush: () => stream.flush(),
            close: () => stream.close(),
          };
        },
      },
    };
  }
}

describe("warm transfer after a handoff", () => {
  it("uses the agent that has the call: its hold line, its summary, its voice for the brief", async () => {
    const billing = new Billing();
    let h!: Harness;
    const call = await warmCall(
      { transferMode: "blind", handoffs: { agents: ["billing"], history: "whole" } },
      {
        handoff: () => ({
          config: {
            ...DEFAULT_SESSION_CONFIG,
            agentName: "billing",
            handoffLine: "Billing here.",
            transferTarget: TARGET,
            transferMode: "warm",
            warmTransfer: { answerMs: 20_000, holdLine: "Billing holds you now." },
          },
          services: billing.services(h),
        }),
      },
    );
    h = call.h;
    h.asrAnswers = ["billing please"];
    h.chatReplies = [[{ tool: { name: "handoff", arguments: '{"agent":"billing"}' } }]];
    await h.say(900);
    await h.untilAgentSilent();
    expect(billing.voice.join(" ")).toContain("Billing here.");
    // Billing's model asks for the transfer; the first agent's is asked nothing more.
    const asked = h.chatRequests.length;
    h.asrAnswers = ["a person please"];
    billing.replies.push([
      { type: "tool-call", call: { id: "call_b1", name: "transfer_call", arguments: "{}" } },
    ]);
    await h.say(900);
    for (let t = 0; t < 5000 && !call.dialled.length; t += 20) await h.run(20);
    expect(call.dialled.map((d) => d.target)).toEqual([TARGET]);
    expect(h.chatRequests.length).toBe(asked);
    call.answer();
    await h.run(1500);
    expect(billing.voice.join(" ")).toContain("Billing holds you now.");
    // The brief: billing's summary, in billing's voice.
    expect(billing.chats.at(-1)![1]!.content).toContain("Caller: a person please");
    expect(billing.voice.find((t) => t.includes("press 1"))).toContain("The caller owes nothing.");
  });
});
