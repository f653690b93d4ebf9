// A reply whose TTS session the service drops mid-way (closed after some audio, as E5 does with
// 1011, or never sending audio), on virtual time with the scripted synthesizer: the session is
// replaced and the caller hears the rest of the reply once, no word twice and none lost; after
// the third cut in one reply, what was heard is followed by the apology. Every word has its own
// audio (wordAudio), so the audio the caller was played can be compared with the reply's.
import { describe, expect, it } from "vitest";
import { DEFAULT_SERVICE_DEADLINES } from "../../src/session/config.ts";
import { type Harness, MS_PER_WORD, RATE, spokenAudio, startedHarness, type TtsFault } from "./harness.ts";

const REPLY = "We are open from nine to five. On Saturdays we close at noon. Sundays we are closed.";
const REOPENED = "TTS session cut mid-reply: reopening it for the rest";

/** The audio played from piece `from` on, as one. */
function playedSince(h: Harness, from: number): Int16Array {
  const pieces = h.transport.played.slice(from);
  const out = new Int16Array(pieces.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Compares audio without printing thousands of samples when it differs. */
function sameAudio(got: Int16Array, want: Int16Array): string {
  if (got.length !== want.length) return `${got.length} samples, want ${want.length}`;
  const i = got.findIndex((v, k) => v !== want[k]);
  return i < 0 ? "same" : `differs from sample ${i} (${(i * 1000) / RATE} ms)`;
}

/** A started call whose next reply's TTS sessions (the first, then each replacement) do `faults`. */
async function replyWith(faults: (TtsFault | undefined)[], chunkMs = 150) {
  const h = await startedHarness();
  h.ttsChunkMs = chunkMs; // not a word's length: cuts fall inside words
  h.ttsFaults = faults;
  h.asrAnswers = ["when are you open"];
  h.chatReplies = [[{ text: REPLY }]];
  const from = h.transport.played.length;
  const sessions = h.ttsSessions.length;
  await h.say(900);
  return { h, from, sessions };
}

const reply = (h: Harness) => h.events().findLast((e) => e.type === "assistant" && e.generated === REPLY);

describe("a reply whose TTS session is cut", () => {
  it("is taken up by a new session: the caller hears the rest once, as the uncut reply sounds", async () => {
    const { h, from } = await replyWith([{ cutAfterAudio: 1 }]);
    await h.untilAgentSilent();
    expect(sameAudio(playedSince(h, from), spokenAudio(REPLY))).toBe("same");
    const r = reply(h);
    expect(r?.type === "assistant" && r.heard).toBe(REPLY);
    expect(r).not.toHaveProperty("error");
    expect(h.historyOf("assistant").at(-1)).toBe(REPLY);
    expect(h.logLines(REOPENED)).toHaveLength(1);
    expect(h.logLines(REOPENED)[0]).toMatchObject({ skipMs: 150, reopen: 1 });
    // The cut session had begun the first sentence; the new one was sent it again, whole, and the rest.
    const [cut, next] = h.ttsSessions.slice(-3);
    expect(cut!.sentences).toEqual(["We are open from nine to five."]);
    expect(next!.text).toBe(REPLY);
    expect(next!.sentences).toEqual([
      "We are open from nine to five.",
      "On Saturdays we close at noon.",
      "Sundays we are closed.",
    ]);
    // Nothing is left open but the spare kept for the next turn.
    expect(h.ttsSessions.filter((s) => !s.closed)).toHaveLength(1);
  });

  it("takes up a cut between sentences from the first sentence not yet begun", async () => {
    // 7 words of the first sentence at 200 ms: cut right after its last audio, before its end.
    const { h, from } = await replyWith([{ cutAfterAudio: 7 }], MS_PER_WORD);
    await h.untilAgentSilent();
    expect(sameAudio(playedSince(h, from), spokenAudio(REPLY))).toBe("same");
    expect(h.logLines(REOPENED)[0]).toMatchObject({ skipMs: 7 * MS_PER_WORD });
  });

  it("is reopened twice when the replacement is cut as well", async () => {
    const { h, from } = await replyWith([{ cutAfterAudio: 1 }, { cutAfterAudio: 4 }]);
    await h.untilAgentSilent();
    expect(sameAudio(playedSince(h, from), spokenAudio(REPLY))).toBe("same");
    expect(h.logLines(REOPENED).map((l) => [l.reopen, l.skipMs])).toEqual([
      [1, 150],
      [2, 600], // the first sentence's first 150 ms dropped again, then 3 × 150 ms more heard
    ]);
    expect(reply(h)).not.toHaveProperty("error");
    expect(h.ttsSessions.filter((s) => !s.closed)).toHaveLength(1);
  });

  it("gives up at the third cut: the apology follows what the caller heard", async () => {
    const { h, from } = await replyWith([{ cutAfterAudio: 1 }, { cutAfterAudio: 4 }, { cutAfterAudio: 2 }]);
    await h.untilAgentSilent();
    expect(h.logLines(REOPENED)).toHaveLength(2);
    const failed = h.events().find((e) => e.type === "assistant" && e.error?.includes("cut 3 times"));
    // 150 ms of the first sentence, then 450 ms more, then the third session's audio beyond the
    // 600 ms it had to drop: none (its two pieces were both dropped).
    expect(failed?.type === "assistant" && failed.heard).toBe("We are…");
    const last = h.events().findLast((e) => e.type === "assistant");
    expect(last?.type === "assistant" && last.generated).toMatch(/^Sorry/);
    expect(h.historyOf("assistant").slice(-2)).toEqual([
      "We are…",
      last?.type === "assistant" && last.generated,
    ]);
    // What was heard of the reply, whole, then the apology.
    const heard = playedSince(h, from);
    const replyPart = spokenAudio(REPLY).subarray(0, (600 * RATE) / 1000);
    expect(sameAudio(heard.subarray(0, replyPart.length), replyPart)).toBe("same");
    expect(heard.length).toBeGreaterThan(replyPart.length);
    expect(h.ttsSessions.filter((s) => !s.closed)).toHaveLength(1);
  });

  it("replaces a session that sends no audio within ttsFirstAudioMs", async () => {
    const { ttsFirstAudioMs } = DEFAULT_SERVICE_DEADLINES;
    const { h, from } = await replyWith([{ silent: true }]);
    await h.untilAgentSilent();
    expect(sameAudio(playedSince(h, from), spokenAudio(REPLY))).toBe("same");
    expect(h.logLines(REOPENED)[0]).toMatchObject({
      err: `no audio within ${ttsFirstAudioMs} ms`,
      skipMs: 0,
    });
    const r = reply(h);
    // The first sentence was complete, and the silent session given the next word, 60 ms after the first token.
    expect(r?.type === "assistant" && r.metrics.voiceToVoiceMs).toBeGreaterThan(ttsFirstAudioMs);
    expect(r?.type === "assistant" && r.metrics.voiceToVoiceMs).toBeLessThan(ttsFirstAudioMs + 500);
    expect(h.ttsSessions.filter((s) => !s.closed)).toHaveLength(1);
  });

  it("does not resume over the caller: audio that comes while they speak waits for them", async () => {
    const h = await startedHarness();
    h.ttsFaults = [{ cutAfterAudio: 2 }];
    h.ttsOpenMs = 1500; // the spare the replacement comes from opens with the reply, slowly
    h.asrAnswers = ["when are you open"];
    h.chatReplies = [[{ text: REPLY }]];
    const from = h.transport.played.length;
    await h.say(900);
    const sessions = h.ttsSessions.length;
    // The caller has heard the 400 ms that came before the cut, and waits (past the moment when
    // speaking again would still be the same turn). The replacement opens: its audio is on its way.
    while (h.ttsSessions.length === sessions) await h.run(20);
    expect(h.transport.played.length).toBeGreaterThan(from);
    expect(h.transport.agentSpeaking).toBe(false);
    const spokeAt = h.clock.now();
    const starts = h.transport.speechStarts.length;
    const start = h.startSpeaking(0); // "hm?", as the rest of the reply comes
    await h.run(300);
    expect(h.transport.speechStarts.slice(starts)).toEqual([]);
    await h.stopSpeaking(0, start + 200);
    await h.untilAgentSilent();
    // After them, the reply went on where it was.
    expect(h.transport.speechStarts.slice(starts).every((t) => t > spokeAt + 300)).toBe(true);
    expect(sameAudio(playedSince(h, from), spokenAudio(REPLY))).toBe("same");
    expect(h.historyOf("assistant").at(-1)).toBe(REPLY);
  });

  it("closes everything when the caller interrupts while the session is being replaced", async () => {
    const h = await startedHarness();
    h.ttsFaults = [{ cutAfterAudio: 1 }];
    h.ttsOpenMs = 4000; // the spare the reply's replacement comes from opens slowly
    h.asrAnswers = ["when are you open", "no wait"];
    h.chatReplies = [[{ text: REPLY }], [{ text: "Sure." }]];
    await h.say(900);
    await h.untilAgentStarts();
    await h.run(1300); // past the moment when speaking again would still be the same turn
    const opened = h.ttsSessions.length;
    await h.say(1200); // interrupts the reply while its new session still opens
    await h.run(100); // "no wait" is recognized: the interruption stands
    const interrupted = h.events().find((e) => e.type === "assistant" && e.interrupted);
    // 200 ms of a 7-word sentence: not one whole word.
    expect(interrupted?.type === "assistant" ? interrupted.heard : undefined).toBe("");
    expect(h.ttsSessions.length).toBe(opened);
    await h.untilAgentSilent();
    // The replacement opened after the turn was over, and was closed at once; so was every other.
    expect(h.ttsSessions.length).toBeGreaterThan(opened);
    expect(h.historyOf("assistant").at(-1)).toBe("Sure.");
    await h.run(4000); // the next spare opens
    expect(h.ttsSessions.filter((s) => !s.closed)).toHaveLength(1);
    expect(h.logLines(REOPENED)).toHaveLength(1);
  });
});
