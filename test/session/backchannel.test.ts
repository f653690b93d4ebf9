// Which words said over the agent only acknowledge it (and let it go on).
import { describe, expect, it } from "vitest";
import { acknowledgementHotwords, onlyAcknowledges } from "../../src/session/backchannel.ts";

describe("words that only acknowledge", () => {
  it("are acknowledgements, repeated or joined, as a recognizer writes them", () => {
    for (const text of [
      "okay okay",
      "Okay, okay.",
      "mm hmm",
      "uh-huh",
      "Oh, I see. Thanks!",
      "yeah right",
      "sure thing",
    ])
      expect(onlyAcknowledges(text), text).toBe(true);
  });

  it("include the caller telling the agent to go on, or that they follow", () => {
    for (const text of [
      "Go on.",
      "Okay, go ahead.",
      "Perfect, thanks.",
      "Sounds good.",
      "That's right.",
      "Uh-huh, makes sense.",
    ])
      expect(onlyAcknowledges(text), text).toBe(true);
  });

  it("include a hum however it is spelled, letter by letter too", () => {
    for (const text of ["Mm-hmm.", "Mhm.", "Hmmm.", "mmm", "mmhmm", "m-hm", "m m h m m", "m h m", "hmm okay"])
      expect(onlyAcknowledges(text), text).toBe(true);
  });

  it("include no words at all: a noise the recognizer heard nothing in", () => {
    expect(onlyAcknowledges("")).toBe(true);
    expect(onlyAcknowledges(" , ")).toBe(true);
  });

  it("are not a request, a correction, a question, or anything long", () => {
    for (const text of [
      "okay wait",
      "no",
      "stop",
      "yes please send it",
      "okay but that is wrong",
      "what",
      "okay okay okay okay okay okay",
      "ja genau",
      "sorry",
      "mm-mm",
      "h",
      "m m h m m wait",
      "hmm what",
      "that's not right",
      "go back",
      "no problem at all but wait",
    ])
      expect(onlyAcknowledges(text), text).toBe(false);
  });

  it("are what an English recognizer is asked to listen for over the agent, and each of them acknowledges", () => {
    for (const language of ["en", "en-US", "EN_gb"]) {
      const words = acknowledgementHotwords(language);
      expect(words).toEqual(expect.arrayContaining(["okay", "yeah", "go on", "mm", "uh-huh"]));
      for (const w of words) expect(onlyAcknowledges(w), w).toBe(true);
    }
    for (const language of ["zh", "de-DE", "english"]) expect(acknowledgementHotwords(language)).toEqual([]);
  });
});
