// The held-out set of the turn-taking benchmark: the phrases of turns-flite-phrases.ts (written
// before anything was tuned, never tuned on) spoken by Debian's flite, a synthesizer unlike the
// project set's espeak-ng (diphone and clustergen voices, its own intonation model), laid out
// the same way.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resample } from "../../codecs/resample.ts";
import { parseWav } from "../../codecs/wav.ts";
import { firstLoudSample, trimSilence } from "../../test/helpers/speech.ts";
import { buildSet, CALL_RATE, type Synth, type TurnCase } from "./turns-cases.ts";
import {
  FLITE_BACKCHANNELS,
  FLITE_COMPLETE,
  FLITE_COUGH_MS,
  FLITE_INTERRUPTIONS,
  FLITE_PAUSED,
  FLITE_PAUSES_MS,
  FLITE_STRETCH,
  FLITE_VOICES,
} from "./turns-flite-phrases.ts";

/**
 * flite speech at the call's rate (resampled in-process: repeatable to the sample), and its
 * phone segments with their end times (flite -psdur), to find where a break put its pause.
 */
function flite(
  text: string,
  voice: string,
  stretch: number,
  ssml: boolean,
): { pcm: Int16Array; segments: Array<{ phone: string; endS: number }> } {
  // flite streams WAV to stdout with unknown sizes in its header: a file is simpler to read.
  const dir = mkdtempSync(join(tmpdir(), "turns-flite-"));
  try {
    const out = join(dir, "speech.wav");
    const args = ["-voice", voice, "--setf", `duration_stretch=${stretch}`, "-psdur"];
    const r = spawnSync("flite", [...args, ...(ssml ? ["-ssml"] : []), "-t", text, "-o", out]);
    if (r.status !== 0) throw new Error(`flite failed: ${r.stderr?.toString() ?? r.error?.message}`);
    const wav = parseWav(new Uint8Array(readFileSync(out)));
    const segments = r.stdout
      .toString()
      .trim()
      .split(/\s+/)
      .map((s) => {
        const [phone, end] = s.split(":");
        return { phone: phone!, endS: Number(end) };
      });
    return { pcm: resample(wav.samples, wav.sampleRate, CALL_RATE), segments };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Text as SSML character data (flite reads entities aloud, so only what XML forbids is escaped). */
const xml = (text: string) => text.replace(/&/g, " and ").replace(/</g, " ").replace(/>/g, " ");

export const fliteSynth: Synth = {
  speak: (text, v) => flite(text, v.voice, v.speed, false).pcm,
  // flite ignores a break's time: it ends a phrase there with a pause ("pau") of its own, 0.1–0.25
  // s, which sayPaused stretches to the case's pause. The break's pause is the internal one after
  // as many phrase breaks as the words before it have commas.
  speakWithBreak(before, after, v) {
    const ssml = `<speak>${xml(before)} <break time="900ms"/> ${xml(after)}</speak>`;
    const { pcm, segments } = flite(ssml, v.voice, v.speed, true);
    const pauses = segments.flatMap((s, i) =>
      s.phone === "pau" && i > 0 && i < segments.length - 1
        ? [{ fromS: segments[i - 1]!.endS, toS: s.endS }]
        : [],
    );
    const brk = pauses[(before.match(/[,;:]/g) ?? []).length];
    if (!brk) throw new Error(`no break found in "${before} … ${after}"`);
    const lead = Math.max(0, firstLoudSample(pcm, CALL_RATE));
    const at = (s: number) => Math.round(s * CALL_RATE) - lead;
    return { pcm: trimSilence(pcm, CALL_RATE), gap: { from: at(brk.fromS), to: at(brk.toS) } };
  },
};
/**
 * The held-out set: flite voices, phrases and pauses nothing was tuned on. `noNoiseBeds`: without
 * its faint beds of room noise, for a room laid under the whole call instead (turns-noisy.ts).
 */
export function buildFliteCases(noNoiseBeds = false): TurnCase[] {
  return buildSet({
    synth: fliteSynth,
    voices: FLITE_VOICES,
    speeds: FLITE_STRETCH,
    complete: FLITE_COMPLETE,
    paused: FLITE_PAUSED,
    pausesMs: FLITE_PAUSES_MS,
    backchannels: FLITE_BACKCHANNELS,
    coughMs: FLITE_COUGH_MS,
    interruptions: FLITE_INTERRUPTIONS,
    seed: 20261124,
    coughSeed: 7100,
    noiseSeed: 9300,
    noNoiseBeds,
  });
}
