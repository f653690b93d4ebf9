// The caller-level gate offline (turns-gate.ts) over every room the notes sweep, each drawn twice,
// and the held-out flite set under seven of them: one line per run, "LABEL {summary}", on stdout.
// With --against, what moved since an earlier sweep's lines (a change's base, run the same way)
// goes to stderr: per run the figures that moved and the cases gone and come, then the totals.
//   node bench/lib/turns-gate-sweep.ts [--against FILE] [--rooms DIR] [--jobs N] > FILE
// --rooms: where bench/rooms.sh made the recorded rooms (default .data/rooms); --jobs: runs at
// once (default: the cores, at most 4). 45 runs take about 7 minutes on 2 cores.
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { parseArgs, promisify } from "node:util";
import { compareSweeps, parseSweep, recordedRooms, SWEEP_FIGURES, sweepRuns } from "./gate-sweep.ts";
import { usageOfFile } from "./usage.ts";

const run = promisify(execFile);
const { values } = parseArgs({
  options: {
    against: { type: "string" },
    rooms: { type: "string", default: ".data/rooms" },
    jobs: { type: "string" },
    help: { type: "boolean" },
  },
});
if (values.help) {
  process.stdout.write(`${usageOfFile(import.meta.filename)}\n`);
  process.exit(0);
}
const jobs = Number(values.jobs ?? Math.min(4, availableParallelism()));
if (!Number.isInteger(jobs) || jobs < 1)
  throw new Error(`--jobs: ${values.jobs} is not a whole number of runs`);
const roomsDir = values.rooms ?? ".data/rooms";
const missing = recordedRooms().filter((f) => !existsSync(join(roomsDir, `${f}.wav`)));
if (missing.length)
  throw new Error(
    `--rooms ${roomsDir}: no ${missing.join(".wav, ")}.wav (bash bench/rooms.sh ${roomsDir} makes them)`,
  );
const before = values.against === undefined ? undefined : parseSweep(readFileSync(values.against, "utf8"));

const gate = join(import.meta.dirname, "turns-gate.ts");
const runs = sweepRuns(roomsDir);
const lines: string[] = new Array(runs.length);
let next = 0;
let printed = 0;
async function worker(): Promise<void> {
  while (next < runs.length) {
    const i = next++;
    const r = runs[i]!;
    let summary: string;
    try {
      const { stdout } = await run(process.execPath, [gate, ...r.args], { maxBuffer: 64 << 20 });
      summary = stdout.trim().split("\n").at(-1) ?? "";
    } catch (e) {
      summary = `failed: ${(e as Error).message.split("\n")[0]}`;
    }
    lines[i] = `${r.label} ${summary}`;
    // In the sweep's order, as each is ready.
    while (printed < runs.length && lines[printed] !== undefined)
      process.stdout.write(`${lines[printed++]}\n`);
  }
}
await Promise.all(Array.from({ length: jobs }, worker));

if (before) {
  const { lines: moved, totals } = compareSweeps(before, parseSweep(lines.join("\n")));
  for (const l of moved) process.stderr.write(`${l}\n`);
  const total = SWEEP_FIGURES.map((f) => `${f} ${totals[f][0]}->${totals[f][1]}`).join(", ");
  process.stderr.write(`${moved.length ? "" : "nothing moved; "}totals: ${total}\n`);
}
