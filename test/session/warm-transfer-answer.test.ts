// The person's spoken answer to a warm transfer (person-answer.ts): the yes/no reading on text, and
// the ear on real parts — the Silero voice detector cutting the person's 8 kHz line, the embedded
// local service recognizing the cut — for a clear spoken "Yes." and "No." (espeak-ng), between
// silences and after a "Hello?" that is neither.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { concatPcm } from "../../codecs/pcm.ts";
import { pcm16Format } from "../../src/api/asr.ts";
import { SvcClient } from "../../src/api/client.ts";
import { type LocalService, startLocalService } from "../../src/service/index.ts";
import { type PersonAnswer, PersonEar, readAnswer } from "../../src/session/person-answer.ts";
import type { Recognizer } from "../../src/session/services.ts";
import type { SpeechDetectorFactory } from "../../src/session/speech-detector.ts";
import { sileroDetectorFactory } from "../../src/session/vad-detector.ts";
import { silence, speak } from "../helpers/speech.ts";
import { until } from "../helpers/until.ts";

describe("reading the person's answer", () => {
  it.each([
    ["Yes.", "accept"],
    ["yeah sure", "accept"],
    ["Okay, put them through.", "accept"],
    ["Sure, no problem.", "accept"],
    ["I'll take it", "accept"],
    ["go ahead", "accept"],
    ["No.", "decline"],
    ["no, not now", "decline"],
    ["Sorry, I can't take it.", "decline"],
    ["I’m busy", "decline"],
    ["decline", "decline"],
    ["Yes... no, actually not now.", "decline"],
    ["Hello? Who is this?", undefined],
    ["", undefined],
    ["nobody", undefined],
  ] as [string, PersonAnswer | undefined][])("%j → %s", (words, answer) => {
    expect(readAnswer(words)).toBe(answer);
  });
});

const RATE = 8000;
const KEY = "ear-key";
let dir: string;
let svc: LocalService;
let recognizer: Recognizer;
let detectors: SpeechDetectorFactory;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-person-ear-"));
  svc = await startLocalService({ dataDir: dir, apiKeys: [KEY] });
  const client = new SvcClient({ baseURL: svc.url, apiKey: KEY });
  // The E6 request the session's recognizer makes (app/bridge/svc-adapters.ts), on the real service.
  recognizer = {
    recognize: async (pcm, rate, signal) =>
      (await client.asr.recognize(pcm, pcm16Format(rate), {}, { signal })).text,
    open: () => {
      throw new Error("the ear recognizes whole utterances");
    },
  };
  // Fed faster than real time: nothing is skipped as a live call's backlog would be.
  detectors = await sileroDetectorFactory({ maxBacklogMs: 60_000 });
}, 120_000);

afterAll(async () => {
  await svc?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Feeds `pcm` to an ear in 20 ms frames, as the person's leg would; what it heard, in order. */
async function hear(pcm: Int16Array): Promise<{ answers: PersonAnswer[]; words: string[] }> {
  const answers: PersonAnswer[] = [];
  const said: string[] = [];
  const log = pino({ level: "info" }, { write: (l: string) => void said.push(l) });
  const ear = new PersonEar({
    rate: RATE,
    recognizer,
    createDetector: detectors,
    log,
    answered: (a) => answers.push(a),
  });
  for (let at = 0; at + 160 <= pcm.length; at += 160) ear.push(pcm.subarray(at, at + 160));
  const heard = () => said.filter((l) => l.includes("the person said")).length;
  await until(() => heard() >= 2, "both utterances recognized");
  ear.close();
  const words = said
    .filter((l) => l.includes("the person said"))
    .map((l) => (JSON.parse(l) as { words: string }).words);
  return { answers, words };
}

describe("the person's ear on the real detector and recognizer", () => {
  const line = (answer: string) =>
    concatPcm([
      silence(600, RATE),
      speak("Hello?", { rate: RATE }),
      silence(1500, RATE),
      speak(answer, { rate: RATE }),
      silence(1500, RATE),
    ]);

  it("hears a spoken yes on an 8 kHz line, after a hello that is neither", async () => {
    const { answers, words } = await hear(line("Yes."));
    expect(words).toHaveLength(2);
    expect(answers).toEqual(["accept"]);
  }, 40_000);

  it("hears a spoken no", async () => {
    const { answers } = await hear(line("No."));
    expect(answers).toEqual(["decline"]);
  }, 40_000);
});
