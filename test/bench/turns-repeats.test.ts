// `repeated_words` of the turns benchmark (bench/lib/turns-repeats.ts) on real synthesized speech:
// a sentence whose start plays again from a new synthesis after a cut is found, with its length; a
// clean reply, the same sentence after the caller spoke again, a reprompt long after and a sentence
// the model wrote twice are not repeats. And the faults a local service played, read back from its
// debug log the way the calls benchmark reads them.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { faultsInLog } from "../../bench/lib/faults-arg.ts";
import { repeatedWords } from "../../bench/lib/turns-repeats.ts";
import type { SpokenSentence } from "../../bench/lib/turns-tts-tap.ts";
import { concatPcm } from "../../codecs/pcm.ts";
import { NO_FAULTS } from "../../src/service/conditions/index.ts";
import { startLocalService } from "../../src/service/index.ts";
import { speak } from "../helpers/speech.ts";

const RATE = 8000;
const silence = (ms: number) => new Int16Array((RATE * ms) / 1000);
const HOURS = "We are open from nine to six on weekdays.";
const SATURDAY = "On Saturdays we close at four.";
// Two syntheses of one sentence: the same timing, not the same samples (as the service's are).
const hours = speak(HOURS, { rate: RATE });
const hoursAgain = speak(HOURS, { rate: RATE, pitch: 60 });
const saturday = speak(SATURDAY, { rate: RATE });
const said = (text: string, ...chunks: Int16Array[]): SpokenSentence => ({ text, chunks, complete: true });
/** A delivery the session was cut within: its end never came. */
const cutShort = (text: string, ...chunks: Int16Array[]): SpokenSentence => ({
  text,
  chunks,
  complete: false,
});
const nobody = () => false;

describe("repeated words in the agent's recording", () => {
  it("finds the start of a sentence heard again from a new synthesis after a cut", () => {
    const cut = hours.slice(0, RATE); // its first second, then the session was cut
    const call = concatPcm([
      silence(500),
      cut,
      silence(400),
      hoursAgain,
      silence(300),
      saturday,
      silence(500),
    ]);
    const spoken = [cutShort(HOURS, cut), said(HOURS, hoursAgain), said(SATURDAY, saturday)];
    const r = repeatedWords(call, RATE, spoken, nobody);
    expect(r.found).toBe(3);
    expect(r.runs).toHaveLength(1);
    expect(r.runs[0]).toMatchObject({ text: HOURS.toLowerCase().replace(".", "") });
    expect(Math.abs(r.runs[0]!.atMs - 1900)).toBeLessThanOrEqual(20);
    expect(r.runs[0]!.ms).toBeGreaterThanOrEqual(900);
    expect(r.runs[0]!.ms).toBeLessThanOrEqual(1000);
    // A second of a sentence of nine words that lasts about three.
    const share = RATE / hoursAgain.length;
    expect(r.words).toBe(Math.round(share * 9));
    expect(r.words).toBeGreaterThanOrEqual(2);
  });

  it("finds the same synthesis played twice, and counts a one-word stutter in ms only", () => {
    const replay = concatPcm([hours, silence(300), hours]);
    expect(repeatedWords(replay, RATE, [said(HOURS, hours)], nobody).words).toBe(9);
    const stutter = concatPcm([hours.slice(0, RATE / 5), silence(200), hoursAgain, silence(300)]);
    const r = repeatedWords(
      stutter,
      RATE,
      [cutShort(HOURS, hours.slice(0, RATE / 5)), said(HOURS, hoursAgain)],
      nobody,
    );
    expect(r.ms).toBeGreaterThan(0);
    expect(r.words).toBe(0);
  });

  it("counts a stutter in a sentence that never came whole as a stutter, not as all its words", () => {
    // Cut after 150 ms, then again after 400 ms: its words are judged at the call's pace.
    const first = hours.slice(0, (RATE * 150) / 1000);
    const second = hoursAgain.slice(0, (RATE * 400) / 1000);
    const call = concatPcm([silence(300), saturday, silence(300), first, silence(200), second, silence(300)]);
    const spoken = [said(SATURDAY, saturday), cutShort(HOURS, first), cutShort(HOURS, second)];
    const r = repeatedWords(call, RATE, spoken, nobody);
    expect(r.runs).toHaveLength(1);
    expect(r.runs[0]!.ms).toBeGreaterThanOrEqual(100);
    expect(r.runs[0]!.words).toBeLessThanOrEqual(1);
    expect(r.words).toBe(0);
  });

  it("finds nothing in a clean reply, across the caller's next line, in a reprompt 8 s on, or said twice by the model", () => {
    const spoken = [said(HOURS, hours), said(SATURDAY, saturday)];
    const clean = concatPcm([silence(300), hours, silence(300), saturday, silence(300)]);
    expect(repeatedWords(clean, RATE, spoken, nobody)).toMatchObject({ words: 0, ms: 0, runs: [], found: 2 });
    const twice = concatPcm([hours, silence(3000), hoursAgain]);
    const both = [said(HOURS, hours), said(HOURS, hoursAgain)];
    const callerAt = (hours.length * 1000) / RATE + 500;
    const spokeBetween = (from: number, to: number) => from < callerAt + 1500 && to > callerAt;
    expect(repeatedWords(twice, RATE, both, spokeBetween).ms).toBe(0);
    const reprompt = concatPcm([hours, silence(8000), hoursAgain]);
    expect(repeatedWords(reprompt, RATE, both, nobody).ms).toBe(0);
    const modelTwice = (text: string) => text === HOURS.toLowerCase().replace(".", "");
    expect(repeatedWords(twice, RATE, both, nobody, modelTwice).ms).toBe(0);
  });

  it("sees nothing of a call whose audio it was not given", () => {
    const call = concatPcm([silence(300), hours, silence(300)]);
    expect(repeatedWords(call, RATE, [said(HOURS, hoursAgain)], nobody).found).toBe(0);
  });
});

describe("faults read from a local service's log", () => {
  it("counts each kind it played within the span", async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const dir = mkdtempSync(join(tmpdir(), "bench-faults-log-"));
    const svc = await startLocalService({
      dataDir: dir,
      apiKeys: ["k"],
      conditions: { faults: { ...NO_FAULTS, chat503: 1 } },
      logger: pino({ level: "debug" }, sink),
    });
    const from = Date.now();
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${svc.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: "Bearer k", "content-type": "application/json" },
        body: JSON.stringify({ model: "svc-3.5-flash", messages: [{ role: "user", content: "hi" }] }),
      });
      expect(res.status).toBe(503);
    }
    await svc.close();
    rmSync(dir, { recursive: true, force: true });
    const log = lines.join("");
    expect(faultsInLog(log, [from, Date.now()])).toEqual({ chat503: 3, asr503: 0, ttsCut: 0, chatStall: 0 });
    expect(faultsInLog(log, [0, from - 1])).toEqual({ chat503: 0, asr503: 0, ttsCut: 0, chatStall: 0 });
  });
});
