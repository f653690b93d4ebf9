// `node bench/lib/discord-receive-floor.ts MEMBERS SECONDS`: what the members' voices cost on this
// machine before any of the bridge's own code runs, µs of CPU per member-second (printed alone).
// A bare process that does only the work the receive path cannot do without, at its pace: one
// 20 ms wake-up, each member's 20 ms stereo CELT packet decoded by libopus straight to 16 kHz mono
// (as member-receiver.ts does), and Silero VAD on every member's 32 ms window, the members' windows
// as one batch on the calling thread (as codecs/silero-inline.ts runs a channel's speakers). Not
// here, and all of it the bridge's: reading the socket, the transport's and DAVE's decryption, the
// windows' bookkeeping, the turn logic, the recognizer's upload.
// `bench discord` runs it beside the bridge's figure (`receive_floor_cpu_us_per_user_s`): the
// target (6,000) minus this is what the bridge's own receive path may cost on the machine at hand.
import { DISCORD_INPUT_RATE } from "../../bridges/discord/member-receiver.ts";
import { OpusCodec } from "../../codecs/opus.ts";
import { sileroWindowSamples } from "../../codecs/silero.ts";
import { InlineSilero, MAX_INLINE_BATCH } from "../../codecs/silero-inline.ts";
import { rowWidth, STATE } from "../../codecs/silero-shared.ts";
import { toStereo48k } from "../../test/fake-discord/member.ts";
import { processRunUs } from "./calls-procs.ts";
import { espeakSpeech } from "./measure.ts";

const MEMBERS = Number(process.argv[2] ?? 6);
const SECONDS = Number(process.argv[3] ?? 6);
const WARMUP_MS = 1500;
const RATE = DISCORD_INPUT_RATE;
const WINDOW = sileroWindowSamples(RATE);
/** Samples of the window before that the model sees in front of each new one. */
const CONTEXT = rowWidth(RATE) - WINDOW;

// Discord's packets as the bench's simulated members make them: 48 kHz stereo Opus, 20 ms each.
const FRAME_48K = 960;
const stereo = toStereo48k({
  pcm: espeakSpeech("What are your opening hours? We are open every day from nine to six.", 48000),
  rate: 48000,
});
const encoder = new OpusCodec(48000, 2);
const packets: Uint8Array[] = [];
for (let at = 0; at + 2 * FRAME_48K <= stereo.length; at += 2 * FRAME_48K) {
  packets.push(encoder.encode(stereo.subarray(at, at + 2 * FRAME_48K)).slice());
}

interface Member {
  decoder: OpusCodec;
  /** The model's input row: CONTEXT samples of the window before, then WINDOW new ones. */
  frame: Float32Array;
  fill: number;
  state: Float32Array;
  result: number;
}
const members: Member[] = Array.from({ length: MEMBERS }, () => ({
  decoder: new OpusCodec(RATE, 1),
  frame: new Float32Array(rowWidth(RATE)),
  fill: 0,
  state: new Float32Array(2 * STATE),
  result: 0,
}));
const silero = await InlineSilero.load();

let next = 0;
let busy = false;
/** Rows Silero ran, and windows skipped because the run before had not come back (must stay 0). */
let ran = 0;
let skipped = 0;
// Two lists swapped from run to run: nothing allocated per tick beyond what libopus returns.
let ready: Member[] = [];
let running: Member[] = [];
async function tick(): Promise<void> {
  const packet = packets[next++ % packets.length]!;
  for (const m of members) {
    const pcm = m.decoder.decode(packet);
    for (let i = 0; i < pcm.length; i++) {
      m.frame[CONTEXT + m.fill++] = pcm[i]! / 32768;
      if (m.fill === WINDOW) {
        ready.push(m);
        m.fill = 0;
      }
    }
  }
  if (ready.length === 0) return;
  if (busy) {
    skipped += ready.length;
    ready.length = 0;
    return;
  }
  busy = true;
  const rows = ready;
  ready = running;
  running = rows;
  // Many members: batches of at most what one inline run takes, one after another.
  if (rows.length <= MAX_INLINE_BATCH) await silero.run(RATE, rows);
  else
    for (let at = 0; at < rows.length; at += MAX_INLINE_BATCH)
      await silero.run(RATE, rows.slice(at, at + MAX_INLINE_BATCH));
  ran += rows.length;
  for (const m of rows) m.frame.copyWithin(0, WINDOW, WINDOW + CONTEXT);
  rows.length = 0;
  busy = false;
}

const timer = setInterval(() => void tick(), 20);
await new Promise((r) => setTimeout(r, WARMUP_MS));
const cpu0 = processRunUs(process.pid);
const ran0 = ran;
await new Promise((r) => setTimeout(r, SECONDS * 1000));
const us = processRunUs(process.pid) - cpu0;
const windows = ran - ran0;
clearInterval(timer);
// A floor that skipped work would be too low: every window the members' audio filled must have run.
// The figure is per second of the members' audio that ran, not of the wall clock: on a loaded
// machine the 20 ms timer fires late and fewer packets come in a second (56 of 63 windows in one).
if (skipped > 0 || windows === 0) {
  process.stderr.write(`receive floor: Silero ran ${windows} windows (${skipped} skipped): no floor\n`);
  process.exit(1);
}
const memberSeconds = (windows * WINDOW) / RATE;
console.log(Math.round(us / memberSeconds));
process.exit(0);
