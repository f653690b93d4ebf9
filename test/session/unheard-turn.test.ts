// A caller turn in which the recognizer made out no words, on the real CallSession in virtual time
// with the caller's audio synthesized (voice-signals.ts, noise.ts) and the voice detector scripted.
// The embedded recognizer hears nothing in some questions under a vacuum cleaner: when the turn
// held a voice at the caller's level in syllables they are asked to say it again (askAgainText),
// at most ASK_AGAIN_MAX times in a row; a noise, or an engine's drone, the detector took for
// speech is let go in silence.
import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../src/core/clock.ts";
import { ASK_AGAIN_MAX, UNHEARD } from "../../src/session/apology.ts";
import { DEFAULT_SESSION_CONFIG } from "../../src/session/config.ts";
import { noise } from "../helpers/noise.ts";
import { droneSignal, mixAt, voiceSignal } from "../helpers/voice-signals.ts";
import { Harness, lineCarrying } from "./harness.ts";

const RATE = 16000;
const at = (ms: number) => Math.round((ms * RATE) / 1000);
const ASK_AGAIN = DEFAULT_SESSION_CONFIG.askAgainText;
/** Where each turn of the caller's begins on the stream, ms, and how long it lasts. */
const TURN_EVERY_MS = 6000;
const TURN_MS = 1200;

/** What the agent said after its greeting (the model's, "Hi."). */
const said = (h: Harness) =>
  h
    .events()
    .flatMap((e) => (e.type === "assistant" ? [e.generated] : []))
    .slice(1);

/** A voice of the caller's pitch (115 Hz) at `fromMs` on the stream. */
const voice = (fromMs: number, seed: number) => ({
  pcm: voiceSignal({ rate: RATE, ms: TURN_MS, dbfs: -20, f0: 115, seed }),
  at: at(fromMs),
});
/** An engine as loud as the voice at `fromMs`: its harmonics at 80 Hz, droning on. */
const engine = (fromMs: number) => ({
  pcm: droneSignal({ rate: RATE, ms: TURN_MS, f0: 80 }),
  at: at(fromMs),
});
/** A noise as loud as the voice (a passing lorry) at `fromMs`. */
const lorry = (fromMs: number, seed: number) => ({
  pcm: noise(TURN_MS, RATE, { dbfs: -20, seed }),
  at: at(fromMs),
});

/**
 * A call with no greeting over a faint hiss in which the caller's side sounds `sounds` (each at
 * 1 s + TURN_EVERY_MS × its index), each taken for speech by the detector and recognized as the
 * next of `words`.
 */
async function turns(
  sounds: ((fromMs: number, seed: number) => { pcm: Int16Array; at: number })[],
  words: string[],
) {
  const h = new Harness(new VirtualClock(), { greeting: "" });
  const spans = sounds.map((sound, i) => sound(1000 + i * TURN_EVERY_MS, 50 + i));
  h.callerAudio = lineCarrying(
    mixAt([{ pcm: noise(1000 + sounds.length * TURN_EVERY_MS, RATE, { dbfs: -60, seed: 41 }) }, ...spans]),
  );
  h.asrAnswers = [...words];
  h.start();
  for (const span of spans) {
    await h.run((span.at * 1000) / RATE + 50 - h.clock.now());
    await h.say(TURN_MS - 50, 100);
    await h.untilAgentSilent(5000);
  }
  return h;
}

describe("a caller turn in which no words were made out", () => {
  it("asks the caller to say it again when it held their voice", async () => {
    const h = await turns([voice], [""]);
    expect(said(h)).toEqual([ASK_AGAIN]);
    expect(h.logLines(`${UNHEARD}: asking them to say it again`)).toHaveLength(1);
    const asked = h.events().findLast((e) => e.type === "assistant");
    expect(asked).toMatchObject({ error: UNHEARD, interrupted: false });
    expect(h.historyOf("user")).toEqual([]);
  });

  it("lets a noise taken for speech go in silence", async () => {
    const h = await turns([lorry], [""]);
    expect(said(h)).toEqual([]);
    expect(h.logLines(`${UNHEARD}: asking them to say it again`)).toHaveLength(0);
  });

  it("lets an engine's drone taken for speech go in silence", async () => {
    const h = await turns([engine], [""]);
    expect(said(h)).toEqual([]);
    expect(h.logLines(`${UNHEARD}: asking them to say it again`)).toHaveLength(0);
  });

  it(`asks again at most ${ASK_AGAIN_MAX} times in a row, and again once words of theirs were answered`, async () => {
    const unheard = Array.from({ length: ASK_AGAIN_MAX + 1 }, () => "");
    const h = await turns(
      Array.from({ length: ASK_AGAIN_MAX + 3 }, () => voice),
      [...unheard, "my wheel is bent", ""],
    );
    expect(said(h)).toEqual([...Array.from({ length: ASK_AGAIN_MAX }, () => ASK_AGAIN), "Okay.", ASK_AGAIN]);
    expect(h.historyOf("user")).toEqual(["my wheel is bent"]);
    expect(
      h.logLines(`${UNHEARD}, asked again ${ASK_AGAIN_MAX} times in a row: waiting for them instead`),
    ).toHaveLength(1);
  });
});
