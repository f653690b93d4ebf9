// The caller's lines as the simulated caller says them: words spoken by the service's TTS (E4, the
// service the bridge's calls use: offline, the embedded local one), WAV files, or keys pressed.
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import type { SvcClient } from "../../../src/api/client.ts";
import { audioOfWav } from "../../../tools/twilio-sim/command.ts";
import type { SimAudio, SimKeys } from "../../../tools/twilio-sim/simulate.ts";
import { type CallerLine, type CheckedSet, ScenarioFileError } from "./scenario.ts";

/** The voice the caller's lines are said in unless the file or the line names another. */
export const CALLER_VOICE = "en_male_adam";
const RATE = 8000;

/** Says words in a voice: mono PCM for the simulated caller. */
export type Speak = (text: string, voice: string) => Promise<SimAudio>;

/** The service's TTS as the caller's voice (each text and voice synthesized once per run). */
export function serviceSpeech(client: SvcClient, model: string): Speak {
  const said = new Map<string, Promise<SimAudio>>();
  return (text, voice) => {
    const key = `${voice}\n${text}`;
    let audio = said.get(key);
    if (!audio) {
      audio = client.speech
        .create({ model, input: text, voice, response_format: "pcm", sample_rate: RATE })
        // 16-bit little-endian mono (copied: the bytes may sit at an odd offset).
        .then(({ audio: bytes }) => ({
          samples: new Int16Array(bytes.slice(0, bytes.byteLength & ~1).buffer),
          rate: RATE,
          label: text,
        }));
      audio.catch(() => said.delete(key));
      said.set(key, audio);
    }
    return audio;
  };
}

/** The WAV files a set's caller lines name, read now (so a missing one stops the run before any call). */
export async function readCallerAudio(
  set: CheckedSet,
  dir: string,
  name: string,
): Promise<Map<string, SimAudio>> {
  const audio = new Map<string, SimAudio>();
  const problems: string[] = [];
  for (const [i, scenario] of set.scenarios.entries())
    for (const [j, line] of scenario.caller.entries()) {
      if (line.audio === undefined || audio.has(line.audio)) continue;
      const file = resolve(dir, line.audio);
      try {
        audio.set(line.audio, audioOfWav(new Uint8Array(await readFile(file)), file));
      } catch (err) {
        problems.push(`scenarios.${i}.caller.${j}.audio: ${(err as Error).message}`);
      }
    }
  if (problems.length) throw new ScenarioFileError(name, problems);
  return audio;
}

/** A scenario's lines as the simulator's turns. */
export async function callerTurns(
  lines: readonly CallerLine[],
  audio: ReadonlyMap<string, SimAudio>,
  speak: Speak,
  voice: string,
): Promise<Array<SimAudio | SimKeys>> {
  return Promise.all(
    lines.map(async (line): Promise<SimAudio | SimKeys> => {
      if (line.keys !== undefined) return { keys: line.keys, label: `keys ${line.keys}` };
      if (line.audio !== undefined) return audio.get(line.audio)!;
      return speak(line.say!, line.voice ?? voice);
    }),
  );
}

/** A line in words, for results: what is said, the file played, or the keys pressed. */
export function lineText(line: CallerLine): string {
  if (line.keys !== undefined) return `(keys ${line.keys})`;
  if (line.audio !== undefined) return `(audio ${line.audio})`;
  return line.say!;
}
