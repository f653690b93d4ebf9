// How a pause case's silence sounded to the caller-level gate (turns-gate.ts): the wait for the end
// of a turn counts from the gate's end of the caller's speech, and runs out when the gate has not
// heard them again. So a pause the gate heard 500 ms longer than it was is cut off by a wait 400 ms
// longer than the pause, whether the gate heard their resumption late or ended their speech before
// the pause began (their last syllable under the room's peaks).

/** A case's times (stream ms): its utterance and, in a pause case, the silent gap inside it. */
export interface PauseCase {
  startMs: number;
  endMs: number;
  pauseFromMs?: number;
  pauseToMs?: number;
}

/**
 * How much longer than the pause the gate heard the silence in it (ms; negative when shorter), from
 * its last end of the caller's speech before they resumed to its next start: undefined when it held
 * their speech through the pause, never heard them again before their last word, or the case has
 * no pause.
 */
export function pauseHeardLonger(c: PauseCase, starts: number[], ends: number[]): number | undefined {
  const { pauseFromMs: from, pauseToMs: to } = c;
  if (from === undefined || to === undefined) return undefined;
  const lastEnd = ends.filter((e) => e > c.startMs && e <= to).at(-1);
  if (lastEnd === undefined) return undefined;
  const next = starts.find((a) => a >= lastEnd);
  // Heard again before the pause began: the gate held the caller's speech through it.
  if (next === undefined || next >= c.endMs || next < from) return undefined;
  return Math.round(next - lastEnd - (to - from));
}
