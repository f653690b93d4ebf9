// The official voices of the local service and the espeak-ng voice each one stands for. espeak-ng
// is a formant synthesizer: "female" and "male" are its voice variants (pitch, formants), not
// recordings; docs/local-service.md says so. A cloned voice maps to the same parameters (see EngineVoice).

/** What the synthesis engine needs to speak with a voice. */
export interface EngineVoice {
  /** espeak-ng voice name, with an optional `+variant` (e.g. `en-us+f3`). */
  espeak: string;
  /** Base pitch 0–100 (espeak default 50). */
  pitch: number;
  /** Pitch range 0–100 (espeak default 50). */
  range: number;
  /** Speaking rate at speed 1.0, words per minute. */
  wpm: number;
  /** Language the voice speaks: `en` or `zh`. */
  language: "en" | "zh";
}

export interface OfficialVoice extends EngineVoice {
  id: string;
  gender: "female" | "male";
  description: string;
}

/** Documented list (docs/local-service.md): ids accepted by E4 `voice` and E5 `voice_id`. */
export const OFFICIAL_VOICES: readonly OfficialVoice[] = [
  {
    id: "en_female_aria",
    gender: "female",
    language: "en",
    description: "American English, female",
    espeak: "en-us+f3",
    pitch: 55,
    range: 60,
    wpm: 170,
  },
  {
    id: "en_male_adam",
    gender: "male",
    language: "en",
    description: "American English, male",
    espeak: "en-us",
    pitch: 45,
    range: 50,
    wpm: 170,
  },
  {
    id: "en_female_grace",
    gender: "female",
    language: "en",
    description: "British English, female",
    espeak: "en+f2",
    pitch: 55,
    range: 55,
    wpm: 165,
  },
  {
    id: "en_male_oliver",
    gender: "male",
    language: "en",
    description: "British English, male",
    espeak: "en",
    pitch: 40,
    range: 45,
    wpm: 165,
  },
  {
    id: "zh_female_mei",
    gender: "female",
    language: "zh",
    description: "Mandarin Chinese, female",
    espeak: "cmn+f3",
    pitch: 55,
    range: 55,
    wpm: 160,
  },
  {
    id: "zh_male_wei",
    gender: "male",
    language: "zh",
    description: "Mandarin Chinese, male",
    espeak: "cmn",
    pitch: 45,
    range: 50,
    wpm: 160,
  },
];

const BY_ID = new Map(OFFICIAL_VOICES.map((v) => [v.id, v]));

export function officialVoice(id: string): OfficialVoice | undefined {
  return BY_ID.get(id);
}

/** Cloned voice ids carry this prefix (E10). */
export const CLONED_VOICE_PREFIX = "voice-";

export function isClonedVoiceId(id: string): boolean {
  return id.startsWith(CLONED_VOICE_PREFIX);
}

/**
 * Looks a cloned voice up for an account (E9/E10 store). The speech routes take one as an option;
 * without it every cloned id is unknown.
 */
export type ClonedVoiceResolver = (account: string, id: string) => EngineVoice | undefined;
