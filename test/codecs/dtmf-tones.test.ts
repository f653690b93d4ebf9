import { describe, expect, it } from "vitest";
import { DtmfToneDetector, detectDtmf } from "../../codecs/dtmf-detector.ts";
import { dtmfPair, dtmfTones } from "../../codecs/dtmf-tones.ts";
import { mulawDecode, mulawEncode } from "../../codecs/g711.ts";
import { concatPcm } from "../../codecs/pcm.ts";
import { speak } from "../helpers/speech.ts";

const ALL = "0123456789*#ABCD";

/** RMS in dB below G.711 full scale's sine (+3.17 dBm0), i.e. dBm0. */
function dbm0(pcm: Int16Array): number {
  let e = 0;
  for (const s of pcm) e += s * s;
  const rms = Math.sqrt(e / pcm.length);
  return 20 * Math.log10(rms / (32767 / Math.SQRT2)) + 3.17;
}

describe("dtmfTones", () => {
  it("makes Q.23's pairs and refuses what is not a key", () => {
    expect(dtmfPair("1")).toEqual({ low: 697, high: 1209 });
    expect(dtmfPair("#")).toEqual({ low: 941, high: 1477 });
    expect(dtmfPair("d")).toEqual({ low: 941, high: 1633 });
    expect(dtmfPair("x")).toBeUndefined();
    expect(() => dtmfTones("1x", 8000)).toThrow(RangeError);
    expect(() => dtmfTones("1", 8000, { toneMs: 40 })).toThrow(/65 ms/);
  });

  it("lays out tone, gap and a half-second wait, at −7/−9 dBm0 (≈ −4.9 dBm0 together)", () => {
    const pcm = dtmfTones("5w6", 8000);
    expect(pcm.length).toBe(800 + 800 + 4000 + 800 + 800);
    // The tone's middle (away from its ramps): −7 and −9 dBm0 add to −4.88 dBm0.
    expect(dbm0(pcm.subarray(100, 700))).toBeCloseTo(-4.88, 1);
    expect(pcm.subarray(800, 1600).every((s) => s === 0)).toBe(true);
    expect(pcm.subarray(1600, 5600).every((s) => s === 0)).toBe(true);
  });
});

describe("DtmfToneDetector", () => {
  it("hears every key sent at 8 and 16 kHz, and through µ-law", () => {
    expect(detectDtmf(dtmfTones(ALL, 8000), 8000)).toBe(ALL);
    expect(detectDtmf(dtmfTones(ALL, 16000), 16000)).toBe(ALL);
    const mulaw = mulawDecode(mulawEncode(dtmfTones(ALL, 8000)));
    expect(detectDtmf(mulaw, 8000)).toBe(ALL);
  });

  it("hears the shortest tones and gaps (65 ms), the same key twice, fed in 20 ms frames", () => {
    const pcm = dtmfTones("1122##", 8000, { toneMs: 65, gapMs: 65 });
    const d = new DtmfToneDetector(8000);
    const heard: string[] = [];
    for (let i = 0; i < pcm.length; i += 160) heard.push(...d.push(pcm.subarray(i, i + 160)));
    expect(heard.join("")).toBe("1122##");
  });

  it("hears no key in speech or silence, and a tone 20 dB down still", () => {
    const speech = speak("press one for sales, two for support, or stay on the line", { rate: 8000 });
    expect(detectDtmf(speech, 8000)).toBe("");
    expect(detectDtmf(new Int16Array(8000), 8000)).toBe("");
    const quiet = dtmfTones("7", 8000).map((s) => Math.round(s / 10));
    expect(detectDtmf(concatPcm([speech, quiet]), 8000)).toBe("7");
  });
});
