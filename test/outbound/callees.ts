// What the SIP tests' callees play into an outbound call (baresip plays a WAV and hangs up at its
// end): a person who says "Hello?" and waits, then answers; a voicemail whose greeting ends in a
// beep. Each comes with where its caller should start speaking, for checks of what it heard.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { concatPcm } from "../../codecs/pcm.ts";
import { encodeWav } from "../../codecs/wav.ts";
import { silence, speak } from "../helpers/speech.ts";

export const CALLEE_RATE = 8000;
const RATE = CALLEE_RATE;
const GREETING_AT_MS = 300;

function beep(hz: number, ms: number): Int16Array {
  const out = new Int16Array((ms * RATE) / 1000);
  for (let i = 0; i < out.length; i++) out[i] = Math.round(7000 * Math.sin((2 * Math.PI * hz * i) / RATE));
  return out;
}

function wav(dir: string, name: string, pcm: Int16Array): string {
  const file = join(dir, name);
  writeFileSync(file, encodeWav(pcm, RATE));
  return file;
}

/** A person: "Hello?" after half a second, a reply four seconds later, then silence until hanging up. */
export function personWav(dir: string): { file: string; helloEndMs: number } {
  const hello = speak("Hello?", { rate: RATE });
  const file = wav(
    dir,
    "person.wav",
    concatPcm([
      silence(500, RATE),
      hello,
      silence(4000, RATE),
      speak("Yes, this is she.", { rate: RATE }),
      silence(8000, RATE),
    ]),
  );
  return { file, helloEndMs: 500 + (hello.length / RATE) * 1000 };
}

/** A voicemail: its greeting, a 1 kHz beep, then fifteen seconds to record a message. */
export function voicemailWav(dir: string): { file: string; beepEndMs: number } {
  const greeting = speak(
    "Hi, you have reached Morgan. I can't take your call right now. Please leave a message after the tone.",
    { rate: RATE, voice: "en-gb" },
  );
  const file = wav(
    dir,
    "voicemail.wav",
    concatPcm([
      silence(GREETING_AT_MS, RATE),
      greeting,
      silence(600, RATE),
      beep(1000, 500),
      silence(15000, RATE),
    ]),
  );
  return { file, beepEndMs: GREETING_AT_MS + (greeting.length / RATE) * 1000 + 600 + 500 };
}

/** A callee that never answers: twenty seconds of silence (with answermode=manual). */
export function quietWav(dir: string): string {
  return wav(dir, "quiet.wav", silence(20000, RATE));
}
