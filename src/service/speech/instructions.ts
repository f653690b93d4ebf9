// Inline instructions of svcaudio-2.5-tts: text inside () (or full-width （）) guides the voice and is
// not spoken. The local engine cannot act on them, so they are removed before synthesis.

const INSTRUCTION = /[(（][^()（）]*[)）]/g;

/** Removes every complete (…) group; nested groups are removed from the inside out. */
export function stripInstructions(text: string): string {
  let out = text;
  for (;;) {
    const next = out.replace(INSTRUCTION, " ");
    if (next === out) break;
    out = next;
  }
  return out.replace(/[ \t]{2,}/g, " ");
}

/** Index of an opening bracket that is not closed yet, or -1 (streamed text may close it later). */
export function openInstructionAt(text: string): number {
  let depth = 0;
  let first = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "(" || c === "（") {
      if (depth === 0) first = i;
      depth++;
    } else if ((c === ")" || c === "）") && depth > 0) {
      depth--;
    }
  }
  return depth > 0 ? first : -1;
}
