// The call simulator against the real Twilio routes, with a scripted session standing in for
// the agent: greets, stops talking when the caller talks over it, replies when the caller
// falls silent. Checks what crossed the wire, not how fast.
import { afterEach, describe, expect, it } from "vitest";
import type { CallTransport } from "../../../bridges/transport.ts";
import { mulawDecode, mulawEncode } from "../../../codecs/g711.ts";
import { onStream } from "../../../tools/twilio-sim/caller-timeline.ts";
import { type SimEvent, simulateCall } from "../../../tools/twilio-sim/simulate.ts";
import { readStreamTwiml } from "../../../tools/twilio-sim/twiml-read.ts";
import {
  AUTH_TOKEN,
  find,
  type Rig,
  recorder,
  scriptedAgent,
  startRig,
  tone,
} from "../../bridges/twilio/helpers.ts";

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** Frames of `pcm` (8 kHz) with any sound in them between `fromMs` and `toMs`. */
function audibleFrames(pcm: Int16Array, fromMs: number, toMs: number): number {
  let n = 0;
  for (let at = fromMs * 8; at + 160 <= toMs * 8; at += 160)
    if (pcm.subarray(at, at + 160).some((v) => v !== 0)) n++;
  return n;
}

describe("simulateCall", () => {
  it("reads <Connect><Stream> and its parameters from TwiML, quotes and entities included", () => {
    const xml =
      '<?xml version="1.0" encoding="UTF-8"?><Response><Say>hi</Say><Connect><Stream url="wss://h/twilio/media?x=1&amp;y=2">' +
      "<Parameter name=\"From\" value=\"+1 &lt;&amp;&quot;x>\"/><Parameter name='To' value='+2'/></Stream></Connect></Response>";
    expect(readStreamTwiml(xml)).toEqual({
      url: "wss://h/twilio/media?x=1&y=2",
      parameters: { From: '+1 <&"x>', To: "+2" },
    });
    expect(readStreamTwiml("<Response><Start><Stream url='wss://h'/></Start></Response>")).toBeNull();
  });

  it("places a signed call, takes reactive turns, presses DTMF, and records what the agent said", async () => {
    const greeting = tone(400, 440);
    const reply = tone(300, 660);
    let session: ReturnType<typeof scriptedAgent> | undefined;
    let transport: CallTransport | undefined;
    const filed = { callSid: "", turns: [{ role: "assistant", text: "hello" }] };
    rig = await startRig({
      authToken: AUTH_TOKEN,
      attach: false,
      onCall(call) {
        transport = call.transport;
        session = scriptedAgent(call.transport, { greeting, reply });
      },
      routes: (http) =>
        http.get("/calls/:id", async (req) => ({ ...filed, callSid: (req.params as { id: string }).id })),
    });

    const result = await simulateCall({
      url: rig.base,
      authToken: AUTH_TOKEN,
      says: [
        { samples: tone(500, 300), rate: 8000, label: "first.wav" },
        { samples: tone(400, 300, 8000, 16000), rate: 16000, label: "second.wav" },
      ],
      dtmf: [{ digit: "7", atMs: 100 }],
      replyGapMs: 300,
      hangUpAfterMs: 400,
      maxSeconds: 20,
      from: "+15550001111",
      to: "+15552223333",
    });

    expect(result.endedBy).toBe("caller");
    expect(result.parameters).toEqual({ From: "+15550001111", To: "+15552223333", CallSid: result.callSid });
    expect(transport!.info).toMatchObject({
      callId: result.callSid,
      from: "+15550001111",
      to: "+15552223333",
    });
    expect(session!.digits).toEqual(["7"]);
    expect(session!.ended).toEqual(["stop"]);
    // The bridge got every caller frame, decoded.
    expect(session!.frames.length).toBe(result.mediaSent);
    expect(result.callerAudio.length).toBe(result.mediaSent * 160);
    const heard = new Int16Array(session!.frames.length * 160);
    session!.frames.forEach((f, i) => {
      heard.set(f, i * 160);
    });
    expect(heard).toEqual(mulawDecode(mulawEncode(result.callerAudio)));

    // Two caller turns, each answered; the agent's audio arrived intact, in order.
    expect(result.turns.map((t) => [t.source, t.label, t.bargeIn])).toEqual([
      ["say", "first.wav", false],
      ["say", "second.wav", false],
    ]);
    for (const t of result.turns) {
      expect(t.responseMs).not.toBeNull();
      expect(t.responseMs!).toBeGreaterThanOrEqual(0);
      expect(t.endMs - t.startMs).toBeGreaterThan(0);
    }
    expect(result.turns[1]!.endMs - result.turns[1]!.startMs).toBe(400);
    const a = result.agentAudio;
    const heardGreeting = mulawDecode(mulawEncode(greeting));
    const heardReply = mulawDecode(mulawEncode(reply));
    const g = find(a, heardGreeting);
    expect(g).toBeGreaterThanOrEqual(0);
    const r1 = find(a, heardReply, g + greeting.length);
    expect(r1 / 8).toBeGreaterThan(result.turns[0]!.endMs);
    const r2 = find(a, heardReply, r1 + reply.length);
    expect(r2 / 8).toBeGreaterThan(result.turns[1]!.endMs);
    expect(find(a, heardReply, r2 + reply.length)).toBe(-1);
    // Nothing else was heard: the sound in the recording is exactly those three pieces.
    let sound = 0;
    for (const v of a) if (v !== 0) sound++;
    let expected = 0;
    for (const v of [...heardGreeting, ...heardReply, ...heardReply]) if (v !== 0) expected++;
    expect(sound).toBe(expected);

    // Every mark came back after its audio played; no clear, so all audio counts as heard.
    expect(result.clears).toEqual([]);
    expect(result.marks.length).toBeGreaterThan(0);
    expect(result.marks.every((m) => !m.cleared && m.echoedMs >= m.receivedMs)).toBe(true);
    expect(transport!.playedMs()).toBe(1000);
    expect(transport!.queuedMs()).toBe(1000);
    expect(result.transcript).toEqual({ ...filed, callSid: result.callSid });
  });

  it("presses a keypad turn once the agent has replied, a key at a time", async () => {
    let session: ReturnType<typeof scriptedAgent> | undefined;
    rig = await startRig({
      attach: false,
      onCall(call) {
        session = scriptedAgent(call.transport, { greeting: tone(500, 440), reply: tone(300, 660) });
      },
    });
    const events: SimEvent[] = [];
    const result = await simulateCall({
      url: rig.base,
      says: [{ keys: "4b#", label: "the order" }],
      replyGapMs: 300,
      hangUpAfterMs: 400,
      noReplyMs: 1000,
      maxSeconds: 20,
      fetchTranscript: false,
      onEvent: (e) => events.push(e),
    });
    expect(result.endedBy).toBe("caller");
    expect(session!.digits).toEqual(["4", "B", "#"]);
    const say = events.find((e) => e.kind === "say")!;
    const keys = events.filter((e) => e.kind === "dtmf");
    expect(say.detail).toBe("the order");
    // Pressed after the greeting and the caller's pause, one key after another.
    expect(say.atMs).toBeGreaterThanOrEqual(500 + 300);
    expect(keys.map((k) => k.detail)).toEqual(["4", "B", "#"]);
    expect(keys.every((k, i) => k.atMs >= (keys[i - 1]?.atMs ?? say.atMs))).toBe(true);
    await expect(
      simulateCall({ url: rig.base, says: [{ keys: "12x" }], maxSeconds: 5, fetchTranscript: false }),
    ).rejects.toThrow('keypad turn "12x": expected digits 0-9, *, # or A-D');
  });

  it("with keep: false keeps nothing per frame and reports each agent frame and clear as it comes", async () => {
    const greeting = tone(3000, 440);
    rig = await startRig({
      attach: false,
      onCall(call) {
        scriptedAgent(call.transport, { greeting, reply: tone(300, 660) });
      },
    });
    const caller = new Int16Array(8000 * 1.1);
    caller.set(tone(600, 300), 8000 * 0.5);
    const seen: { kind: "media" | "clear"; atMs: number }[] = [];
    const result = await simulateCall({
      url: rig.base,
      caller: { samples: caller, rate: 8000 },
      hangUpAfterMs: 400,
      maxSeconds: 20,
      fetchTranscript: false,
      keep: false,
      onAgentMessage: (kind, atMs) => seen.push({ kind, atMs }),
    });
    expect(result.endedBy).toBe("caller");
    // Nothing kept per frame...
    expect(result.agentAudio.length).toBe(0);
    expect(result.callerAudio.length).toBe(0);
    expect(result.mediaReceivedMs).toEqual([]);
    expect(result.marks).toEqual([]);
    expect(result.turns).toEqual([]);
    // ...but every agent frame and the barge-in's clear were heard, in arrival order.
    expect(result.mediaReceived).toBeGreaterThan(0);
    expect(seen.filter((e) => e.kind === "media").length).toBe(result.mediaReceived);
    expect(seen.filter((e) => e.kind === "clear").map((e) => e.atMs)).toEqual(result.clears);
    expect(result.clears.length).toBe(1);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.atMs).toBeGreaterThanOrEqual(seen[i - 1]!.atMs);
  });

  it("barges in on the greeting: the bridge clears, pending marks come back unheard", async () => {
    const greeting = tone(3000, 440);
    let transport: CallTransport | undefined;
    rig = await startRig({
      attach: false,
      onCall(call) {
        transport = call.transport;
        scriptedAgent(call.transport, { greeting, reply: tone(300, 660) });
      },
    });
    const caller = new Int16Array(8000 * 1.1);
    caller.set(tone(600, 300), 8000 * 0.5);
    const result = await simulateCall({
      url: rig.base,
      caller: { samples: caller, rate: 8000, label: "caller.wav" },
      hangUpAfterMs: 400,
      maxSeconds: 20,
      fetchTranscript: false,
    });
    expect(result.endedBy).toBe("caller");
    expect(result.turns.length).toBe(1);
    const turn = result.turns[0]!;
    expect(turn).toMatchObject({
      source: "wav",
      label: "caller.wav",
      startMs: 500,
      endMs: 1100,
      bargeIn: true,
    });
    expect(turn.clearMs).not.toBeNull();
    expect(turn.responseMs).not.toBeNull();
    expect(result.clears.length).toBe(1);
    expect(result.marks.some((m) => m.cleared)).toBe(true);

    // The bridge's heard position agrees with what the simulated caller actually heard
    // of the greeting, to within one mark's span (100 ms), never more.
    const heardGreetingMs = (() => {
      const a = result.agentAudio;
      let n = 0;
      for (let i = 0; i < 8000 * 1.1 && i < a.length; i++) if (a[i] !== 0) n++;
      return n / 8;
    })();
    const playedBeforeReply = transport!.playedMs() - 300;
    expect(playedBeforeReply).toBeLessThanOrEqual(heardGreetingMs);
    expect(heardGreetingMs - playedBeforeReply).toBeLessThan(100 + 20);
    expect(heardGreetingMs).toBeLessThan(3000);
  });

  it("holds the caller's timeline at a cue until the agent has been heard, and reports the hold", async () => {
    // A slow agent: its greeting begins once it has heard 1 s of the line.
    let frames = 0;
    rig = await startRig({
      attach: false,
      onCall(call) {
        const t = call.transport;
        const { listener } = recorder();
        t.attach({
          ...listener,
          audio(f) {
            listener.audio(f);
            if (++frames === 50) t.play(tone(2000, 440));
          },
        });
      },
    });
    // The caller means to speak 300 ms into the greeting, counted on it beginning at 200 ms.
    const caller = new Int16Array(8000 * 1.2);
    caller.set(tone(400, 300), 8000 * 0.5);
    const result = await simulateCall({
      url: rig.base,
      caller: { samples: caller, rate: 8000, label: "caller.wav", cues: [{ atMs: 500, agentHeardMs: 300 }] },
      hangUpAfterMs: 300,
      maxSeconds: 20,
      fetchTranscript: false,
    });
    expect(result.holds.length).toBe(1);
    const [hold] = result.holds;
    expect(hold!.atMs).toBe(500);
    // The greeting could not begin before 1 s of the line had been sent.
    expect(hold!.heldMs).toBeGreaterThanOrEqual(1000 - 500 + 300);
    const turn = result.turns.find((u) => u.source === "wav")!;
    expect(turn.startMs).toBe(onStream(500, result.holds));
    expect(turn.bargeIn).toBe(true);
    // What the caller heard of the agent before speaking: the cue's 300 ms.
    const heardBefore = audibleFrames(result.agentAudio, 0, turn.startMs);
    expect(heardBefore * 20).toBe(300);
  });

  it("reports a refused signature as an error", async () => {
    rig = await startRig({ authToken: AUTH_TOKEN });
    await expect(simulateCall({ url: rig.base, authToken: "wrong", maxSeconds: 1 })).rejects.toThrow(
      /voice webhook .*HTTP 403/,
    );
  });
});
