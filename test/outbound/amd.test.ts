import { describe, expect, it } from "vitest";
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
