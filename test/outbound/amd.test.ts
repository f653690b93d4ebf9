import { describe, expect, it } from "vitest";
import { concatPcm } from "../../codecs/pcm.ts";
import { type AmdEvent, AnsweringMachineDetector } from "../../src/outbound/amd.ts";
import { speak } from "../helpers/speech.ts";

const RATE = 8000;

function tone(hz: number, ms: number): Int16Array {
  const out = new Int16Array(Math.round((ms * RATE) / 1000));
  for (let i = 0; i < out.length; i++) out[i] = Math.round(6000 * Math.sin((2 * Math.PI * hz * i) / RATE));
  return out;
}
const quiet = (ms: number) => new Int16Array((ms * RATE) / 1000);

function run(parts: Int16Array[]): { events: AmdEvent[]; ms: number[] } {
  const pcm = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    pcm.set(p, o);
    o += p.length;
  }
  const d = new AnsweringMachineDetector(RATE);
  const events: AmdEvent[] = [];
  for (let i = 0; i + 160 <= pcm.length; i += 160) events.push(...d.push(pcm.subarray(i, i + 160), 20));
  return { events, ms: [] };
}

const decided = (events: AmdEvent[]) => events.find((e) => e.kind === "decided");
const cue = (events: AmdEvent[]) => events.find((e) => e.kind === "message-cue");

describe("answering-machine detection", () => {
  it("a short hello then silence is a person, decided within a second of its end", () => {
    for (const words of ["Hello?", "Hi, this is Sam.", "Yes?"]) {
      const hello = speak(words, { rate: RATE });
      const helloMs = (hello.length / RATE) * 1000;
      const { events } = run([quiet(600), hello, quiet(3000)]);
      const d = decided(events);
      expect(d?.kind === "decided" && d.result).toBe("human");
      expect(d!.atMs - (600 + helloMs)).toBeLessThan(1200);
      expect(cue(events)).toBeUndefined();
    }
  });

  it("silence from the start is a person waiting", () => {
    const d = decided(run([quiet(5000)]).events);
    expect(d?.kind === "decided" && d.result).toBe("human");
  });

  it("a long greeting is a machine, and the message cue comes at the end of its beep", () => {
    const greeting = speak(
      "Hi, you have reached the voicemail of Morgan. I am not available right now. Please leave a message after the tone.",
      { rate: RATE, voice: "en-gb" },
    );
    const gMs = (greeting.length / RATE) * 1000;
    const { events } = run([quiet(300), greeting, quiet(500), tone(1000, 400), quiet(3000)]);
    const d = decided(events);
    expect(d?.kind === "decided" && d.result).toBe("machine");
    expect(d!.atMs).toBeLessThan(300 + gMs);
    const c = cue(events);
    const beepEnd = 300 + gMs + 500 + 400;
    expect(c?.kind === "message-cue" && c.beep).toBeTruthy();
    expect(c!.atMs).toBeGreaterThanOrEqual(beepEnd - 20);
    expect(c!.atMs - beepEnd).toBeLessThanOrEqual(60);
  });

  it("a machine without a beep gets its cue after the greeting's silence", () => {
    const greeting = speak("The person you are calling is not available. Please try again later, goodbye.", {
      rate: RATE,
    });
    const gMs = (greeting.length / RATE) * 1000;
    const { events } = run([greeting, quiet(4000)]);
    expect(decided(events)?.kind === "decided" && (decided(events) as { result: string }).result).toBe(
      "machine",
    );
    const c = cue(events);
    expect(c?.kind === "message-cue" && c.beep).toBeFalsy();
    expect(c!.atMs).toBeGreaterThan(gMs + 1500);
    expect(c!.atMs).toBeLessThan(gMs + 2600);
  });
});

/** Early media (before the answer) then the answered call's audio, 20 ms frames. */
function runEarly(early: Int16Array[], answered: Int16Array[]) {
  const d = new AnsweringMachineDetector(RATE);
  const e = concatPcm(early);
  for (let i = 0; i + 160 <= e.length; i += 160) d.hearEarly(e.subarray(i, i + 160), 20);
  const events: AmdEvent[] = [];
  const a = concatPcm(answered);
  for (let i = 0; i + 160 <= a.length; i += 160) events.push(...d.push(a.subarray(i, i + 160), 20));
  return { events, detector: d };
}

/** Two tones at once (ringback: 440+480 Hz in North America, 400+450 Hz in the UK). */
function dual(a: number, b: number, ms: number): Int16Array {
  const out = new Int16Array(Math.round((ms * RATE) / 1000));
  for (let i = 0; i < out.length; i++)
    out[i] = Math.round(
      3000 * Math.sin((2 * Math.PI * a * i) / RATE) + 3000 * Math.sin((2 * Math.PI * b * i) / RATE),
    );
  return out;
}

describe("answering-machine detection with early media", () => {
  const hello = () => speak("Hello?", { rate: RATE });

  it("ringback (two-tone or one-tone) never decides, even running into the answer: the person's Hello does", () => {
    for (const ring of [
      [dual(440, 480, 2000), quiet(4000), dual(440, 480, 1200)],
      [dual(400, 450, 400), quiet(200), dual(400, 450, 400), quiet(2000), dual(400, 450, 900)],
      [tone(425, 1000), quiet(4000), tone(425, 700)],
    ]) {
      const { events, detector } = runEarly(ring, [quiet(400), hello(), quiet(2000)]);
      expect(detector.early).toMatchObject({ greetingMs: 0 });
      expect(detector.early?.beep).toBeUndefined();
      expect(detector.earlyMs).toBeGreaterThan(2000);
      const d = decided(events);
      expect(d?.kind === "decided" && d.result, JSON.stringify(events)).toBe("human");
      expect(d!.atMs).toBeGreaterThan(400);
    }
  });

  it("a carrier announcement followed by ringback leaves nothing: the answer starts afresh", () => {
    const announcement = speak("Please hold while we try to connect your call.", { rate: RATE });
    const { events, detector } = runEarly(
      [announcement, quiet(500), dual(440, 480, 2000), quiet(1000)],
      [quiet(300), hello(), quiet(2000)],
    );
    expect(detector.early?.greetingMs).toBe(0);
    expect((decided(events) as { result: string }).result).toBe("human");
  });

  it("a voicemail that plays its greeting and beep as early media, then answers: machine at once, the beep before the answer", () => {
    const greeting = speak("Hi, you have reached Morgan. Please leave a message after the tone.", {
      rate: RATE,
      voice: "en-gb",
    });
    const { events, detector } = runEarly(
      [dual(440, 480, 2000), quiet(1000), greeting, quiet(400), tone(1000, 500), quiet(200)],
      [quiet(3000)],
    );
    const beep = detector.early?.beep;
    expect(beep?.hz).toBeCloseTo(1000, -2);
    expect(beep!.endMs).toBeGreaterThanOrEqual(-260);
    expect(beep!.endMs).toBeLessThanOrEqual(-140);
    const d = decided(events);
    expect(d).toMatchObject({ result: "machine", why: "a beep heard in early media" });
    expect(d!.atMs).toBeLessThanOrEqual(20);
    const c = cue(events);
    expect(c?.kind === "message-cue" && c.beep?.endMs).toBe(beep!.endMs);
    expect(c!.atMs).toBeLessThanOrEqual(20);
  });

  it("a greeting that began in early media and runs on after the answer counts whole", () => {
    const greeting = speak(
      "Hi, you have reached the voicemail of Morgan. I am not available right now. Please leave a message.",
      { rate: RATE },
    );
    const cut = Math.round(greeting.length * 0.6);
    const { events, detector } = runEarly(
      [quiet(500), greeting.subarray(0, cut)],
      [greeting.subarray(cut), quiet(3000)],
    );
    expect(detector.early!.greetingMs).toBeGreaterThan(1000);
    const d = decided(events);
    expect(d).toMatchObject({ result: "machine" });
    // Decided sooner than the greeting's post-answer part alone would allow.
    expect(d!.atMs).toBeLessThan(2000);
  });

  it("a beep that ran into the answer after a greeting is still the beep; after ringback it is not", () => {
    const greeting = speak("Please leave a message after the tone.", { rate: RATE });
    const after = runEarly([greeting, quiet(300), tone(1000, 300)], [tone(1000, 300), quiet(3000)]);
    expect((decided(after.events) as { result: string }).result).toBe("machine");
    expect((cue(after.events) as { beep?: { endMs: number } }).beep?.endMs).toBe(300);
    const ring = runEarly([quiet(500), tone(425, 800)], [tone(425, 200), quiet(400), hello(), quiet(2000)]);
    expect((decided(ring.events) as { result: string }).result).toBe("human");
  });
});
