// `--hello MS` (the turns bench, turns-gate): every caller says "Hello?" MS into the call, in their
// own voice at their own speech level, as people do when a call connects. Heard as the call
// connects, a voice may be a TV already going and is learned as the room's; a caller's own must
// still not bar their later words (caller-voice.ts, the voice heard as the call connected).
// Cough cases are left as they are: their caller's voice is not on record (the case's is "synthetic").
import { mixPcm, trimSilence } from "../../test/helpers/speech.ts";
import { gain } from "./turns-audio.ts";
import { activeLevelDb } from "./turns-backgrounds.ts";
import { CALL_RATE, type Synth, type TurnCase } from "./turns-cases.ts";

/** `--hello`'s value: where the "Hello?" starts, ms into the call (undefined: no --hello). */
export function parseHello(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Number(value);
  if (!Number.isFinite(ms) || ms < 0)
    throw new Error(`--hello wants ms into the call (e.g. 0), got ${value}`);
  return ms;
}

const samplesAt = (ms: number) => Math.round((ms * CALL_RATE) / 1000);

/** `c` with its caller saying "Hello?" `atMs` into the call, said by `synth` in the case's voice. */
export function withHello(c: TurnCase, atMs: number, synth: Synth): TurnCase {
  if (c.category === "cough") return c;
  // Their own speech: the question asked first, else the labelled sound.
  const [from, to] = [c.questionStartMs ?? c.startMs, c.questionEndMs ?? c.endMs];
  const said = trimSilence(synth.speak("Hello?", { voice: c.voice, speed: c.speed }), CALL_RATE);
  const hello = gain(
    said,
    activeLevelDb(c.caller.subarray(samplesAt(from), samplesAt(to))) - activeLevelDb(said),
  );
  return {
    ...c,
    caller: mixPcm(c.caller, hello, samplesAt(atMs)),
    helloFromMs: atMs,
    helloToMs: atMs + (hello.length * 1000) / CALL_RATE,
  };
}
