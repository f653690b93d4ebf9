// Word error rate of the embedded recognizer (PocketSphinx, as the local service runs it) on the
// noisy set's labelled utterances, cut from the call as the line carries them (μ-law, 8 kHz, up to
// 16 kHz), with and without WebRTC's noise suppressor first (8 kHz, run over the call from its
// first frame, as agent.noiseSuppression does). Coughs apart. It measures whether suppression
// helps recognition, not the bridge: one run of the recognizer per utterance and variant.
//   node bench/lib/asr-noise-probe.ts NOISE [--set flite] [--draw N] [--level 0-3] [--args="-maxhmmpf 30000"]
// (--args: PocketSphinx options added to the engine's own.)
import { parseArgs } from "node:util";
import { mulawDecode, mulawEncode } from "../../codecs/g711.ts";
import { NoiseSuppressor } from "../../codecs/noise-suppressor.ts";
import { resample } from "../../codecs/resample.ts";
import { SphinxEngine } from "../../src/service/engines/asr/sphinx-engine.ts";
import { wordErrors } from "../../test/service/speech/helpers.ts";
import { parseNoise } from "./turns-backgrounds.ts";
import { buildFliteNoisyCases, buildNoisyCases } from "./turns-noisy.ts";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    set: { type: "string" },
    draw: { type: "string" },
    level: { type: "string" },
    args: { type: "string" },
  },
});
const noise = positionals[0]!;
const layers = await parseNoise(noise);
const cases = (
  values.set === "flite" ? buildFliteNoisyCases(layers) : buildNoisyCases(layers, 0, Number(values.draw ?? 0))
).filter((c) => c.category !== "cough");
const engine = new SphinxEngine({ decoders: 1, args: values.args ? values.args.split(" ") : [] });
await engine.start();
// Punctuation apart ("Stop, that's wrong."): the recognizer writes none.
const words = (s: string) => s.toLowerCase().replace(/[^a-z' ]+/g, " ");
const level = Number(values.level ?? 2);
const tot: Record<string, { e: number; n: number; empty: number }> = {};
for (const c of cases) {
  const heard = mulawDecode(mulawEncode(c.caller));
  const ns = new NoiseSuppressor(8000, level);
  const cleaned = new Int16Array(heard);
  for (let i = 0; i + 80 <= cleaned.length; i += 80) ns.process(cleaned.subarray(i, i + 80));
  const from = Math.max(0, Math.round(((c.startMs - 200) * 8000) / 1000));
  const to = Math.round(((c.endMs + 300) * 8000) / 1000);
  const row: string[] = [c.id];
  for (const [name, pcm] of [
    ["raw", heard],
    ["ns", cleaned],
  ] as const) {
    const heardText = (await engine.recognize(resample(pcm.subarray(from, to), 8000, 16000)))
      .map((w) => w.word)
      .join(" ");
    const { errors, words: n } = wordErrors(words(c.text), heardText);
    const key = `${c.category}:${name}`;
    tot[key] ??= { e: 0, n: 0, empty: 0 };
    const t = tot[key];
    t.e += errors;
    t.n += n;
    if (!heardText) t.empty++;
    row.push(`${name}=${errors}/${n} "${heardText}"`);
  }
  console.error(row.join("  "));
}
const all = (name: string) =>
  Object.entries(tot)
    .filter(([k]) => k.endsWith(`:${name}`))
    .reduce((a, [, v]) => ({ e: a.e + v.e, n: a.n + v.n, empty: a.empty + v.empty }), {
      e: 0,
      n: 0,
      empty: 0,
    });
console.log(
  JSON.stringify({
    noise,
    set: values.set ?? "noisy",
    level,
    wer_raw: +(all("raw").e / all("raw").n).toFixed(3),
    wer_ns: +(all("ns").e / all("ns").n).toFixed(3),
    by: Object.fromEntries(
      Object.entries(tot).map(([k, v]) => [k, { wer: +(v.e / v.n).toFixed(2), empty: v.empty }]),
    ),
  }),
);
await engine.close();
