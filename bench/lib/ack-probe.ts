// Whether the embedded recognizer hears sounds over the agent for what they are, with and without
// acknowledgements as hotwords: each backchannel and interruption of the noisy set (or --set
// flite) under NOISE, cut from the call as the line carries it, recognized both ways; counts the
// backchannels that only acknowledge (the agent goes on) and the interruptions that would.
//   node bench/lib/ack-probe.ts NOISE [--set flite] [--draw N] [--bonus N] [--quiet]
// (--bonus: the engine's score bonus per hotword word, in place of its own; --quiet: totals only.)
import { parseArgs } from "node:util";
import { mulawDecode, mulawEncode } from "../../codecs/g711.ts";
import { resample } from "../../codecs/resample.ts";
import { SphinxEngine } from "../../src/service/engines/asr/sphinx-engine.ts";
import { acknowledgementHotwords, onlyAcknowledges } from "../../src/session/backchannel.ts";
import { parseNoise } from "./turns-backgrounds.ts";
import { buildFliteNoisyCases, buildNoisyCases } from "./turns-noisy.ts";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    set: { type: "string" },
    draw: { type: "string" },
    bonus: { type: "string" },
    quiet: { type: "boolean" },
  },
});
const noise = positionals[0]!;
const layers = await parseNoise(noise);
const cases = (
  values.set === "flite" ? buildFliteNoisyCases(layers) : buildNoisyCases(layers, 0, Number(values.draw ?? 0))
).filter((c) => c.category === "backchannel" || c.category === "interrupt");
const engine = new SphinxEngine({
  decoders: 1,
  ...(values.bonus ? { hotwordBonus: Number(values.bonus) } : {}),
});
await engine.start();
const tally = { bc: 0, bcAck: 0, bcAckHot: 0, int: 0, intAck: 0, intAckHot: 0 };
for (const c of cases) {
  const heard = mulawDecode(mulawEncode(c.caller));
  const from = Math.max(0, Math.round(((c.startMs - 150) * 8000) / 1000));
  const to = Math.round(((c.endMs + 250) * 8000) / 1000);
  const pcm = resample(heard.subarray(from, to), 8000, 16000);
  const plain = (await engine.recognize(pcm)).map((w) => w.word).join(" ");
  const hot = (await engine.recognize(pcm, { hotwords: acknowledgementHotwords("en") }))
    .map((w) => w.word)
    .join(" ");
  const a = onlyAcknowledges(plain);
  const b = onlyAcknowledges(hot);
  if (c.category === "backchannel") {
    tally.bc++;
    tally.bcAck += +a;
    tally.bcAckHot += +b;
  } else {
    tally.int++;
    tally.intAck += +a;
    tally.intAckHot += +b;
  }
  if (!values.quiet)
    console.error(`${c.id} "${c.text}": "${plain}"${a ? " ACK" : ""} | "${hot}"${b ? " ACK" : ""}`);
}
console.log(JSON.stringify({ noise, set: values.set ?? "noisy", draw: values.draw ?? 0, ...tally }));
await engine.close();
