// Recognition on audio made by the espeak-ng command line and resampled by sox (independent of the
// service's own TTS path).
import { execFileSync } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { type RecognizedWord, SphinxEngine } from "../../../src/service/engines/asr/sphinx-engine.ts";
import { wordErrors } from "./helpers.ts";

function speech16k(text: string): Int16Array {
  const wav = execFileSync("sh", [
    "-c",
    `espeak-ng -v en-us --stdout "$1" | sox -D -t wav - -t raw -r 16000 -e signed -b 16 -c 1 -`,
    "_",
    text,
  ]);
  return new Int16Array(wav.buffer.slice(wav.byteOffset, wav.byteOffset + wav.length));
}

const engines: SphinxEngine[] = [];
async function engine() {
  const e = new SphinxEngine({ decoders: 1 });
  await e.start();
  engines.push(e);
  return e;
}
afterAll(async () => {
  for (const e of engines) await e.close();
});

const text = (ws: RecognizedWord[]) => ws.map((w) => w.word).join(" ");

describe("PocketSphinx engine", () => {
  it("recognizes words with timestamps inside the audio", async () => {
    const e = await engine();
    const pcm = speech16k("i want to cancel my subscription");
    const words = await e.recognize(pcm);
    expect(words.length).toBeGreaterThan(2);
    expect(words.some((w) => ["i", "want", "to", "cancel", "my", "subscription"].includes(w.word))).toBe(
      true,
    );
    const durationMs = (pcm.length / 16000) * 1000;
    let prev = 0;
    for (const w of words) {
      expect(w.startMs).toBeGreaterThanOrEqual(prev);
      expect(w.endMs).toBeGreaterThan(w.startMs);
      expect(w.endMs).toBeLessThanOrEqual(durationMs + 20);
      prev = w.endMs;
    }
  });

  it("streams settled words while decoding, then the rest at the end", async () => {
    const e = await engine();
    const calls: Array<{ words: string; final: boolean }> = [];
    const pcm = speech16k("my internet is not working and the connection keeps dropping every evening");
    const words = await e.recognize(pcm, { onWords: (ws, final) => calls.push({ words: text(ws), final }) });
    expect(calls.at(-1)!.final).toBe(true);
    expect(calls.filter((c) => !c.final && c.words).length).toBeGreaterThan(0);
    expect(words.length).toBeGreaterThan(4);
  });

  it("hotwords bias recognition toward them", async () => {
    const e = await engine();
    const pcm = speech16k("please update my address");
    const plain = text(await e.recognize(pcm));
    const biased = text(await e.recognize(pcm, { hotwords: ["address", "invoice", "Account Balance"] }));
    expect(plain).not.toContain("address");
    expect(biased).toContain("update my address");
    // hotwords the audio does not support change nothing
    expect(text(await e.recognize(pcm, { hotwords: ["refund", "technical support"] }))).toBe(plain);
  });

  it("reuses a loaded decoder with no carry-over: the same audio gives the same words", async () => {
    const e = await engine();
    const a = await e.recognize(speech16k("i lost my credit card"));
    await e.recognize(speech16k("please call me back tomorrow morning"));
    const b = await e.recognize(speech16k("i lost my credit card"));
    expect(a.length).toBeGreaterThan(1);
    expect(b).toEqual(a);
  });

  it("a stream of 20 ms pushes gives what batch decoding gives on an utterance shorter than its lead", async () => {
    const e = await engine();
    const pcm = speech16k("thank you");
    expect(pcm.length).toBeLessThan(16000);
    const stream = e.openStream();
    for (let at = 0; at < pcm.length; at += 320) stream.push(pcm.subarray(at, at + 320));
    expect(await stream.finish()).toEqual(await e.recognize(pcm));
  });

  it("decodes a long utterance as it arrives, close to batch decoding, and frees its decoder", async () => {
    const e = await engine(); // one decoder: a leaked one would hang the next recognize
    const sentence = "i want to cancel my subscription and get a refund for last month";
    const pcm = speech16k(sentence);
    const stream = e.openStream();
    for (let at = 0; at < pcm.length; at += 320) {
      stream.push(pcm.subarray(at, at + 320));
      // real time would be 20 ms per push; a yield now and then lets decoding keep up
      if (at % 16000 === 0) await new Promise((r) => setTimeout(r, 5));
    }
    const streamed = text(await stream.finish());
    const batch = text(await e.recognize(pcm));
    const { errors, words } = wordErrors(batch, streamed);
    expect(words).toBeGreaterThan(6);
    expect(errors / words).toBeLessThanOrEqual(0.25);
    expect(wordErrors(sentence, streamed).errors / sentence.split(" ").length).toBeLessThan(0.6);
  });

  it("an aborted stream rejects its finish and gives its decoder back", async () => {
    const e = await engine();
    const pcm = speech16k("please call me back tomorrow morning");
    const stream = e.openStream();
    stream.push(pcm);
    const finished = stream.finish();
    stream.abort(new Error("caller went on"));
    await expect(finished).rejects.toThrow(/caller went on|aborted/);
    expect((await e.recognize(speech16k("i lost my credit card"))).length).toBeGreaterThan(1);
    const empty = e.openStream();
    expect(await empty.finish()).toEqual([]);
  });

  it("an abort while the final decode runs waits for it: no decoder operation beside another, the decoder given back", async () => {
    const e = await engine(); // one decoder: a leaked one would hang the next recognize
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const stream = e.openStream();
      // The caller hangs up just as the final decode starts (the race a live call hits).
      const finalResult = e.finalResult.bind(e);
      e.finalResult = (d, phrases) => {
        const result = finalResult(d, phrases);
        stream.abort(new Error("caller hung up"));
        return result;
      };
      stream.push(speech16k("please call me back tomorrow morning"));
      await stream.finish().catch(() => []);
      e.finalResult = finalResult;
      expect((await e.recognize(speech16k("i lost my credit card"))).length).toBeGreaterThan(1);
      // Node reports a rejection left unhandled once the microtasks run out, before the next turn.
      await new Promise((r) => setImmediate(r));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });
});
