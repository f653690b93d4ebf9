// The real CallSession on virtual time with scripted services: turn-taking, barge-in,
// tools, DTMF, faults and silence handling.
import { describe, expect, it } from "vitest";
import { HARNESS_TURN, MS_PER_WORD, startedHarness } from "./harness.ts";

const started = startedHarness;

describe("CallSession", () => {
  it("greets, answers a turn, and measures the turn", async () => {
    const h = await started();
    expect(h.historyOf("assistant")).toEqual(["Hello."]);
    h.asrAnswers = ["what are your opening hours"];
    h.chatReplies = [[{ text: "We are open nine to five. Anything else?" }]];
    await h.say(1200);
    await h.untilAgentSilent();
    expect(h.historyOf("user")).toEqual(["what are your opening hours"]);
    expect(h.historyOf("assistant")).toEqual(["Hello.", "We are open nine to five. Anything else?"]);
    const turn = h.events().find((e) => e.type === "assistant" && e.generated.startsWith("We are"));
    expect(turn?.type === "assistant" && turn.metrics.voiceToVoiceMs).toBeGreaterThan(0);
    expect(turn?.type === "assistant" && turn.metrics.eouDelayMs).toBeGreaterThanOrEqual(250);
    expect(turn?.type === "assistant" && turn.metrics.asrMs).toBe(80);
  });

  it("logs the times the reply's audio ran dry before the rest of it came", async () => {
    const h = await started();
    h.asrAnswers = ["what are your opening hours", "and on sundays"];
    // A first sentence of 2 words (400 ms of audio), then 12 words streamed at 100 ms each: the
    // caller hears the first sentence out and waits for the second.
    h.tokenMs = 100;
    h.chatReplies = [
      [{ text: "Nine to five. We close at noon on Saturdays and stay closed all day on Sundays." }],
      [{ text: "Closed." }],
    ];
    await h.say(1200);
    await h.untilAgentSilent();
    const said = () => h.logLines("agent said");
    const dry = said().find((l) => String(l.heard).startsWith("Nine to five."));
    expect(dry?.heard).toMatch(/Sundays\.$/);
    expect(dry?.audioDryRuns).toBe(1);
    // A reply whose audio kept ahead of the playout has no such field.
    h.tokenMs = 10;
    await h.say(800);
    await h.untilAgentSilent();
    const steady = said().find((l) => l.heard === "Closed.");
    expect(steady).toBeDefined();
    expect(steady).not.toHaveProperty("audioDryRuns");
    expect(said().filter((l) => "audioDryRuns" in l)).toHaveLength(1);
  });

  it("starts work preemptively but speaks only once the turn is confirmed", async () => {
    const h = await started();
    const before = h.transport.speechStarts.length;
    h.asrAnswers = ["hello there"];
    await h.say(800, 100);
    // 100 ms after speech end: ASR runs, nothing has been played yet.
    expect(h.transport.speechStarts.length).toBe(before);
    await h.untilAgentSilent();
    expect(h.transport.speechStarts.length).toBe(before + 1);
    const played = h.transport.speechStarts.at(-1)!;
    expect(h.chatRequests.length).toBe(1);
    expect(played).toBeGreaterThan(0);
  });

  it("does not cut the caller off at a mid-sentence pause", async () => {
    const h = await started();
    h.asrAnswers = ["i would like to check the", "i would like to check the status of my order"];
    // Words that hardly ever end a sentence: the longest wait.
    h.endProbability = (words) => (words.endsWith("the") ? 0.001 : 0.99);
    await h.say(900);
    await h.run(500); // a 600 ms pause in all, longer than the short end-of-turn wait
    await h.say(1100);
    await h.untilAgentSilent();
    expect(h.historyOf("user")).toEqual(["i would like to check the status of my order"]);
    // Each stretch of speech was recognized as it was spoken, the second from the first's start.
    expect(h.asrStreams).toBe(2);
    expect(h.asrRequests.length).toBe(2);
    // The second recognition got the whole utterance, first part included.
    expect(h.asrRequests[1]!).toBeGreaterThan(h.asrRequests[0]! * 2);
  });

  it("does not answer while the caller is audibly starting again", async () => {
    const h = await started();
    h.asrAnswers = ["my order number is", "my order number is four five six seven"];
    const before = h.transport.speechStarts.length;
    await h.say(900); // speech-end is reported 100 ms after the speech ended
    await h.run(120);
    h.onset = true; // the caller goes on; the VAD has heard it but not yet called it speech
    await h.run(160); // 380 ms into the pause, past the 250 ms end-of-turn wait
    expect(h.transport.speechStarts.length).toBe(before);
    h.onset = false;
    await h.say(1000);
    await h.untilAgentSilent();
    expect(h.historyOf("user")).toEqual(["my order number is four five six seven"]);
    expect(h.transport.speechStarts.length).toBe(before + 1);
  });

  it("answers once an onset dies away, and after a bounded wait if it never settles", async () => {
    for (const [onsetMs, minEou, maxEou] of [
      [100, 300, 340], // an onset from 200 to 300 ms after the speech ended
      [5000, 540, 600], // steady sound the VAD keeps undecided: at most 300 ms more
    ] as const) {
      const h = await started();
      h.asrAnswers = ["what are your opening hours"];
      await h.say(900);
      await h.run(100);
      h.onset = true;
      await h.run(Math.min(onsetMs, 600));
      h.onset = false;
      await h.untilAgentSilent();
      expect(h.historyOf("user")).toEqual(["what are your opening hours"]);
      const turn = h.events().findLast((e) => e.type === "assistant");
      const eou = turn?.type === "assistant" ? turn.metrics.eouDelayMs : undefined;
      expect(eou).toBeGreaterThanOrEqual(minEou);
      expect(eou).toBeLessThanOrEqual(maxEou);
    }
  });

  it("ends the turn quickly after a sentence that sounds complete", async () => {
    const h = await started();
    h.asrAnswers = ["i want to cancel my order"];
    await h.say(1000);
    await h.untilAgentSilent();
    const turn = h.events().findLast((e) => e.type === "assistant");
    expect(turn?.type === "assistant" && turn.metrics.eouDelayMs).toBeLessThan(400);
  });

  it("yields to a real interruption and keeps only what the caller heard", async () => {
    const h = await started();
    h.asrAnswers = ["tell me about your plans", "stop I want a person"];
    h.chatReplies = [
      [
        {
          text: "We have three plans. The basic plan costs ten dollars. The premium plan costs twenty dollars.",
        },
      ],
      [{ text: "Sure." }],
    ];
    await h.say(1000);
    // Let the agent speak ~1.2 s, then talk over it for a second.
    for (let t = 0; t < 3000 && h.transport.speechStarts.length < 2; t += 20) await h.run(20);
    await h.run(1200);
    const clearsBefore = h.transport.clears;
    await h.say(1000);
    expect(h.transport.clears).toBe(clearsBefore + 1);
    await h.untilAgentSilent();
    const interrupted = h.events().find((e) => e.type === "assistant" && e.interrupted);
    expect(interrupted?.type === "assistant" && interrupted.heard).toMatch(/^We have three plans\./);
    expect(interrupted?.type === "assistant" && interrupted.heard).not.toContain("premium");
    expect(interrupted?.type === "assistant" && interrupted.metrics.bargeInMs).toBe(180);
    const assistant = h.historyOf("assistant");
    expect(assistant[1]).toBe(interrupted?.type === "assistant" ? interrupted.heard : "");
    expect(h.historyOf("user")).toEqual(["tell me about your plans", "stop I want a person"]);
    expect(assistant.at(-1)).toBe("Sure.");
  });

  it("resumes after a backchannel instead of dropping the answer", async () => {
    const h = await started();
    h.asrAnswers = ["tell me about your plans"];
    const reply =
      "We have three plans. The basic plan costs ten dollars. The premium plan costs twenty dollars.";
    h.chatReplies = [[{ text: reply }]];
    await h.say(1000);
    for (let t = 0; t < 3000 && h.transport.speechStarts.length < 2; t += 20) await h.run(20);
    await h.run(800);
    await h.say(300); // "uh-huh"
    await h.untilAgentSilent();
    expect(h.events().some((e) => e.type === "barge-in" && e.outcome === "resumed")).toBe(true);
    expect(h.historyOf("assistant").at(-1)).toBe(reply);
    expect(h.historyOf("user")).toEqual(["tell me about your plans"]);
    // The backchannel's recognition began with it and was dropped unfinished.
    expect(h.asrStreams).toBe(2);
    expect(h.asrAborts).toBe(1);
    expect(h.asrRequests.length).toBe(1);
    // Paused then resumed: every word was heard, none twice beyond the gap.
    const words = reply.split(/\s+/).length;
    const heardMs = h.transport.playedMs();
    expect(heardMs).toBeGreaterThanOrEqual(words * MS_PER_WORD);
  });

  it("merges the turns when the caller goes on after the turn was confirmed but before the reply is heard", async () => {
    const h = await started();
    h.tokenMs = 200; // a slow model: the reply is not audible yet when the caller resumes
    h.asrAnswers = ["i want to know", "i want to know where you are"];
    const starts = h.transport.speechStarts.length;
    await h.say(800);
    await h.run(200); // 300 ms of silence: confirmed at 250 ms, nothing played yet
    await h.say(700);
    await h.untilAgentSilent();
    expect(h.historyOf("user")).toEqual(["i want to know where you are"]);
    expect(h.transport.speechStarts.length).toBe(starts + 1);
    expect(h.events().filter((e) => e.type === "user")).toHaveLength(1);
    expect(h.speculation.filter((sp) => !sp.used)).toEqual([{ used: false, chatRequests: 1 }]);
  });

  it("falls silent at once when the caller goes on just after the answer began, and answers the whole utterance", async () => {
    const h = await started();
    h.asrAnswers = ["i bought a bike from you", "i bought a bike from you and the brakes squeak"];
    h.chatReplies = [[{ text: "Sorry to hear that you had trouble with it." }], [{ text: "Let me help." }]];
    await h.say(900);
    await h.untilAgentStarts();
    await h.run(40);
    const resumedAt = h.clock.now();
    await h.say(800); // the caller goes on 40 ms into the early answer
    await h.untilAgentSilent();
    // (the VAD reports a start when it is made, so "at once" is the same instant here)
    expect(h.transport.clearTimes.find((t) => t >= resumedAt)).toBe(resumedAt);
    expect(h.historyOf("user")).toEqual(["i bought a bike from you and the brakes squeak"]);
    expect(h.historyOf("assistant").at(-1)).toBe("Let me help.");
    expect(h.historyOf("assistant")).not.toContain("Sorry to hear that you had trouble with it.");
  });

  it("answers the whole utterance when the caller goes on just after a slow answer began, past the longest end-of-turn wait", async () => {
    const h = await started();
    // A slow recognition: the answer is first heard after the longest wait for the end of a turn.
    h.asrDelaysMs = [HARNESS_TURN.maxEndOfTurnMs];
    h.asrAnswers = ["i bought a bike from you", "i bought a bike from you in blue"];
    h.chatReplies = [[{ text: "Sorry to hear that you had trouble with it." }], [{ text: "Let me help." }]];
    const lastWordAt = h.clock.now() + 900;
    await h.say(900);
    await h.untilAgentStarts(4000);
    expect(h.clock.now() - lastWordAt).toBeGreaterThan(HARNESS_TURN.maxEndOfTurnMs);
    await h.run(100);
    const resumedAt = h.clock.now();
    await h.say(500); // "in blue": shorter than an interruption takes to be sure
    await h.untilAgentSilent();
    expect(h.transport.clearTimes.find((t) => t >= resumedAt)).toBe(resumedAt);
    expect(h.historyOf("user")).toEqual(["i bought a bike from you in blue"]);
    expect(h.events().flatMap((e) => (e.type === "user" ? [e.text] : []))).toEqual([
      "i bought a bike from you in blue",
    ]);
    expect(h.historyOf("assistant").at(-1)).toBe("Let me help.");
  });

  it("keeps a turn out of the conversation while the caller who goes on late in the grace decides it", async () => {
    const h = await started();
    h.asrAnswers = ["i bought a bike from you", "i bought a bike from you and the brakes squeak"];
    h.chatReplies = [[{ text: "Sorry to hear that you had trouble with it." }], [{ text: "Let me help." }]];
    await h.say(900);
    await h.untilAgentStarts();
    // Going on near the grace's end: the answer is dropped only bargeInMinMs later, after the grace.
    await h.run(HARNESS_TURN.resumeGraceMs - HARNESS_TURN.bargeInMinMs / 2);
    await h.say(800);
    await h.untilAgentSilent();
    expect(h.events().flatMap((e) => (e.type === "user" ? [e.text] : []))).toEqual([
      "i bought a bike from you and the brakes squeak",
    ]);
    expect(h.historyOf("user")).toEqual(["i bought a bike from you and the brakes squeak"]);
  });

  it("pauses an early answer at a possible onset: dropped if it becomes speech, resumed if it dies away", async () => {
    for (const becomesSpeech of [true, false]) {
      const h = await started();
      h.asrAnswers = ["i bought a bike from you", "i bought a bike from you and the brakes squeak"];
      h.chatReplies = [[{ text: "Sorry to hear that you had trouble with it." }], [{ text: "Let me help." }]];
      await h.say(900);
      await h.untilAgentStarts();
      await h.run(40);
      const onsetAt = h.clock.now();
      h.onset = true; // heard by the VAD, not yet speech
      await h.run(20);
      expect(h.transport.clearTimes.find((t) => t >= onsetAt)).toBe(onsetAt); // at the next frame
      expect(h.transport.agentSpeaking).toBe(false);
      if (becomesSpeech) {
        await h.run(80);
        h.onset = false;
        await h.say(800);
      } else {
        await h.run(60);
        h.onset = false; // a breath: nothing more
      }
      await h.untilAgentSilent();
      const replies = h.historyOf("assistant");
      if (becomesSpeech) {
        expect(h.historyOf("user")).toEqual(["i bought a bike from you and the brakes squeak"]);
        expect(replies).toEqual(["Hello.", "Let me help."]);
      } else {
        expect(h.historyOf("user")).toEqual(["i bought a bike from you"]);
        expect(replies).toEqual(["Hello.", "Sorry to hear that you had trouble with it."]);
      }
    }
  });

  it("keeps an early answer paused through a frame the possible onset dips under", async () => {
    const h = await started();
    h.asrAnswers = ["where is your shop"];
    h.chatReplies = [[{ text: "We are at ten Main Street, next to the bakery." }]];
    await h.say(900);
    await h.untilAgentStarts();
    await h.run(40);
    h.onset = true;
    await h.run(40);
    expect(h.transport.agentSpeaking).toBe(false);
    const clears = h.transport.clearTimes.length;
    h.onset = false; // one soft frame of a syllable
    await h.run(20);
    h.onset = true;
    await h.run(40);
    expect(h.transport.agentSpeaking).toBe(false);
    expect(h.transport.clearTimes.length).toBe(clears); // never sent again, so nothing to clear
    h.onset = false; // now it died away
    await h.run(20);
    expect(h.transport.agentSpeaking).toBe(false);
    await h.run(60);
    expect(h.transport.agentSpeaking).toBe(true);
    await h.untilAgentSilent();
    expect(h.historyOf("assistant").at(-1)).toBe("We are at ten Main Street, next to the bakery.");
  });

  it("resumes the early answer when what followed it was only a click", async () => {
    const h = await started();
    h.asrAnswers = ["where is your shop"];
    h.chatReplies = [[{ text: "We are at ten Main Street." }]];
    await h.say(900);
    await h.untilAgentStarts();
    await h.say(60, 20); // a click: paused, then resumed
    await h.untilAgentSilent();
    expect(h.historyOf("assistant").at(-1)).toBe("We are at ten Main Street.");
    expect(h.historyOf("user")).toEqual(["where is your shop"]);
  });

  it("files a reply cut short by the caller hanging up, with what was heard", async () => {
    const h = await started();
    h.asrAnswers = ["tell me about your plans"];
    h.chatReplies = [
      [{ text: "We have three plans. The basic plan costs ten dollars. The premium plan costs twenty." }],
    ];
    await h.say(1000);
    for (let t = 0; t < 3000 && h.transport.speechStarts.length < 2; t += 20) await h.run(20);
    await h.run(1000);
    h.transport.listener.ended("caller hung up");
    await h.run(100);
    const reply = h.events().find((e) => e.type === "assistant" && e.generated.startsWith("We have"));
    expect(reply?.type === "assistant" && reply.interrupted).toBe(true);
    expect(reply?.type === "assistant" && reply.heard).toMatch(/^We have/);
    expect(reply?.type === "assistant" && reply.heard).not.toContain("premium");
    expect(reply?.type === "assistant" && reply.metrics.voiceToVoiceMs).toBeGreaterThan(0);
    expect(h.ended).toEqual({ outcome: "caller_hangup", reason: "caller hung up" });
  });

  it("hangs up after speaking when the model calls end_call", async () => {
    const h = await started();
    h.asrAnswers = ["that's all thanks bye"];
    h.chatReplies = [
      [{ text: "Goodbye!" }, { tool: { name: "end_call", arguments: '{"reason":"caller done"}' } }],
    ];
    await h.say(900);
    await h.untilAgentSilent();
    await h.run(200);
    expect(h.transport.hangups).toEqual(["caller done"]);
    expect(h.ended).toEqual({ outcome: "agent_hangup", reason: "agent: caller done" });
    expect(h.toolLists[0]!.map((t) => t.function.name)).toContain("end_call");
  });

  it("names the end it asked for, even when the transport reports it before the request returns", async () => {
    for (const [tool, ended] of [
      ["end_call", { outcome: "agent_hangup", reason: "agent: caller done" }],
      ["transfer_call", { outcome: "transferred", reason: "transferred to +15551234" }],
    ] as const) {
      const h = await started({ transferTarget: "+15551234" });
      h.transport.endsWhenAsked = true;
      h.asrAnswers = ["that's all"];
      h.chatReplies = [[{ text: "Okay!" }, { tool: { name: tool, arguments: '{"reason":"caller done"}' } }]];
      await h.say(900);
      await h.untilAgentSilent();
      await h.run(200);
      expect(h.ended).toEqual(ended);
    }
  });

  it("transfers when asked, and tells the caller when the transfer fails", async () => {
    const h = await started({ transferTarget: "+15551234" });
    h.asrAnswers = ["a person please"];
    h.chatReplies = [
      [{ text: "Transferring you now." }, { tool: { name: "transfer_call", arguments: "{}" } }],
    ];
    await h.say(900);
    await h.untilAgentSilent();
    await h.run(200);
    expect(h.transport.transfers).toEqual(["+15551234"]);

    const f = await started({ transferTarget: "sip:desk@example.com" });
    f.transport.failTransfer = true;
    f.asrAnswers = ["a person please"];
    f.chatReplies = [
      [{ tool: { name: "transfer_call", arguments: "{}" } }],
      [{ text: "Sorry, I could not transfer you." }],
    ];
    await f.say(900);
    await f.untilAgentSilent();
    await f.run(500);
    await f.untilAgentSilent();
    expect(f.ended).toBeUndefined();
    expect(f.historyOf("assistant").at(-1)).toBe("Sorry, I could not transfer you.");
  });

  it("runs HTTP tools and feeds the result back to the model", async () => {
    const { createServer } = await import("node:http");
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => res.end(JSON.stringify({ status: "shipped", got: JSON.parse(body) })));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as { port: number }).port;
    const h = await started({
      httpTools: [
        {
          name: "order_status",
          description: "look up an order",
          parameters: { order: { type: "string" } },
          url: `http://127.0.0.1:${port}/status`,
        },
      ],
    });
    h.asrAnswers = ["where is order one two three"];
    h.chatReplies = [
      [{ tool: { name: "order_status", arguments: '{"order":"123"}' } }],
      [{ text: "Your order has shipped." }],
    ];
    await h.say(900);
    // Real HTTP happens outside virtual time: give it a moment, then run the clock.
    for (let i = 0; i < 50 && h.chatRequests.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 10));
      await h.run(20);
    }
    await h.untilAgentSilent();
    server.close();
    const toolMsg = h.chatRequests[1]!.find((m) => m.role === "tool");
    expect(toolMsg?.content).toContain('"status":"shipped"');
    expect(toolMsg?.content).toContain('"order":"123"');
    expect(h.historyOf("assistant").at(-1)).toBe("Your order has shipped.");
  });

  it("passes DTMF digits to the model as text", async () => {
    const h = await started();
    h.transport.listener.dtmf("4");
    h.transport.listener.dtmf("2");
    await h.run(1600);
    await h.untilAgentSilent();
    expect(h.historyOf("user")).toEqual(["(the caller pressed on the keypad: 4 2)"]);
  });

  it("keeps words still being recognized when keys are pressed, before the keys", async () => {
    const h = await started();
    h.asrAnswers = ["my order number is"];
    h.asrDelaysMs = [3000]; // a slow service: the keys come while the words are recognized
    h.chatReplies = [[{ text: "Let me look that up." }]];
    await h.say(900);
    await h.run(400);
    h.transport.listener.dtmf("4");
    h.transport.listener.dtmf("2");
    await h.run(4000);
    await h.untilAgentSilent();
    expect(h.historyOf("user")).toEqual(["my order number is", "(the caller pressed on the keypad: 4 2)"]);
    // One answer, to both: the keys' turn was asked with the words before it.
    const asked = h.chatRequests
      .at(-1)!
      .filter((m) => m.role === "user")
      .map((m) => m.content);
    expect(asked).toEqual(["my order number is", "(the caller pressed on the keypad: 4 2)"]);
  });

  it("retries a failed recognition, then apologizes and keeps listening", async () => {
    const h = await started();
    h.asrAnswers = [new Error("asr 500"), "hello"];
    const streams = h.asrStreams;
    await h.say(800);
    await h.untilAgentSilent();
    expect(h.historyOf("user")).toEqual(["hello"]);
    // The streamed utterance failed; the retry sent the same utterance in one request.
    expect(h.asrStreams).toBe(streams + 1);
    // (pre-roll 300 ms + 800 ms of speech + 60 ms, at 16 kHz; the stream also had the VAD's 100 ms lag)
    expect(h.asrRequests.slice(-2)).toEqual([(300 + 800 + 100) * 16, (300 + 800 + 60) * 16]);

    h.asrAnswers = [new Error("asr 500"), new Error("asr 500 again"), new Error("asr 500 a third time")];
    const before = h.transport.played.length;
    await h.say(800);
    await h.untilAgentSilent();
    expect(h.transport.played.length).toBeGreaterThan(before);
    expect(h.historyOf("assistant").at(-1)).toMatch(/^Sorry/);
    h.asrAnswers = ["are you there"];
    await h.say(800);
    await h.untilAgentSilent();
    expect(h.historyOf("user").at(-1)).toBe("are you there");
  });

  it("survives a chat failure and a TTS outage with the cached apology", async () => {
    const h = await started();
    h.asrAnswers = ["hello"];
    h.chatReplies = [[{ fail: true }]];
    await h.say(800);
    await h.untilAgentSilent();
    expect(h.historyOf("assistant").at(-1)).toMatch(/^Sorry/);
    expect(h.chatRequests).toHaveLength(1); // the request that failed was not sent again

    // The open session (the spare) is closed when next used, and no new one opens.
    h.ttsDown = true;
    h.asrAnswers = ["hello again"];
    const before = h.transport.played.length;
    await h.say(800);
    await h.untilAgentSilent();
    expect(h.transport.played.length).toBeGreaterThan(before);
    expect(h.historyOf("assistant").at(-1)).toMatch(/^Sorry/);
    // Each failed turn, then its apology.
    const faults = h.events().flatMap((e) => (e.type === "assistant" && e.error ? [e.generated] : []));
    expect(faults).toEqual(["", expect.stringMatching(/^Sorry/), "Okay.", expect.stringMatching(/^Sorry/)]);
    expect(h.ended).toBeUndefined();
  });

  it("re-prompts a silent caller, then says goodbye and hangs up", async () => {
    const h = await started({ repromptAfterMs: 3000, maxReprompts: 1 });
    await h.run(3500);
    await h.untilAgentSilent();
    expect(h.historyOf("assistant").at(-1)).toBe("Are you still there?");
    await h.run(3500);
    await h.untilAgentSilent();
    await h.run(200);
    expect(h.transport.hangups).toEqual(["caller silent"]);
    expect(h.ended).toEqual({ outcome: "caller_silent", reason: "caller silent" });
  });

  it("says goodbye and hangs up at the call's time limit", async () => {
    const h = await started({ maxCallMs: 5000, repromptAfterMs: 60_000 });
    await h.run(5500);
    await h.untilAgentSilent();
    await h.run(200);
    expect(h.historyOf("assistant").at(-1)).toBe("I'll hang up now. Goodbye!");
    expect(h.transport.hangups).toEqual(["max call duration"]);
    expect(h.ended).toEqual({ outcome: "max_call_duration", reason: "max call duration" });
    expect(h.events().at(-1)).toMatchObject({ type: "call-end", outcome: "max_call_duration" });
  });
});
