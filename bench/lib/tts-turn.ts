// One E5 turn as the benchmarks time it: a sentence and a flush sent, the audio read until the
// sentence ends; resolves with the milliseconds to its first audio delta.
import type { TtsSession } from "../../src/api/tts-session.ts";

export function ttsTurn(s: TtsSession, it: AsyncIterator<unknown>, text: string): Promise<number> {
  const t0 = performance.now();
  s.sendText(text);
  s.flush();
  return (async () => {
    let first = -1;
    for (;;) {
      const r = await it.next();
      if (r.done) throw new Error("session ended during a turn");
      const o = r.value as { type: string };
      if (o.type === "audio" && first < 0) first = performance.now() - t0;
      if (o.type === "sentence.end") return first;
    }
  })();
}
