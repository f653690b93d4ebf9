// What an offline sweep of the caller-level gate plays (turns-gate-sweep.ts), and what changed
// between two sweeps. A change to the gate helps one room and costs another: the notes judge it
// on every room at once, drawn twice, and on the held-out flite set under a few of them.

/** A sweep's line for one run: turns-gate.ts's summary (the figures compared). */
export interface GateSummary {
  missed: number;
  coughs: number;
  spurious: number;
  false_barge_in: string[];
  missed_barge_in: string[];
  greeting_stopped: string[];
  cut_short: string[];
  held_open: string[];
  resumed_late: string[];
  /** These two are missing from sweeps made before they were counted. */
  resume_unheard?: string[];
  pause_lengthened?: string[];
}

/** The figures a comparison reports, in this order. */
export const SWEEP_FIGURES = [
  "missed",
  "coughs",
  "spurious",
  "false_barge_in",
  "missed_barge_in",
  "greeting_stopped",
  "cut_short",
  "held_open",
  "resumed_late",
  "resume_unheard",
  "pause_lengthened",
] as const satisfies readonly (keyof GateSummary)[];

export type SweepFigure = (typeof SWEEP_FIGURES)[number];

/** One run of turns-gate.ts: its line's label and its arguments. */
export interface SweepRun {
  label: string;
  args: string[];
}

/** Recorded rooms (bench/rooms.sh) and synthesized ones, each under the line's hiss, dB under the caller. */
const ROOMS = [
  "REC/conv.wav:10",
  "REC/conv.wav:16",
  "talker:10",
  "talker:16",
  "REC/tv.wav:10",
  "REC/pa.wav:10",
  "cafe:10",
  "babble:10",
  "babble:16",
  "REC/far.wav:10",
  "REC/kitchen.wav:10",
  "music:10",
  "hiss:40",
  "street:10",
  "REC/car.wav:10",
  "REC/keys.wav:10",
  "REC/siren.wav:10",
  "REC/vacuum.wav:10",
  "REC/bus.wav:6",
];
/** The rooms the held-out flite set plays under. */
const FLITE_ROOMS = [
  "REC/conv.wav:16",
  "talker:10",
  "babble:16",
  "hiss:40",
  "cafe:16",
  "REC/pa.wav:10",
  "REC/tv.wav:10",
];
const DRAWS = [0, 1];
const LINE_HISS = "hiss:24";

/** The sweep's runs, the recorded rooms read from `roomsDir`. */
export function sweepRuns(roomsDir: string): SweepRun[] {
  const room = (r: string) => r.replace(/^REC\//, `${roomsDir}/`);
  const runs: SweepRun[] = [];
  for (const r of ROOMS)
    for (const d of DRAWS)
      runs.push({ label: `${room(r)}/${d}`, args: [`${room(r)},${LINE_HISS}`, "--draw", String(d)] });
  for (const r of FLITE_ROOMS)
    runs.push({ label: `flite-${room(r)}`, args: [`${room(r)},${LINE_HISS}`, "--set", "flite"] });
  return runs;
}

/** The recorded rooms the sweep needs (file names). */
export function recordedRooms(): string[] {
  const files = [...ROOMS, ...FLITE_ROOMS]
    .filter((r) => r.startsWith("REC/"))
    .map((r) => r.slice("REC/".length).replace(/\.wav:.*$/, ""));
  return [...new Set(files)];
}

/** A sweep's lines ("LABEL {json}"), by label; a line whose run failed maps to undefined. */
export function parseSweep(text: string): Map<string, GateSummary | undefined> {
  const out = new Map<string, GateSummary | undefined>();
  for (const line of text.split("\n")) {
    const at = line.indexOf(" ");
    if (at <= 0) continue;
    const label = line.slice(0, at);
    try {
      out.set(label, JSON.parse(line.slice(at + 1)) as GateSummary);
    } catch {
      out.set(label, undefined);
    }
  }
  return out;
}

const count = (v: number | string[] | undefined) => (typeof v === "number" ? v : (v?.length ?? 0));

export interface SweepChange {
  /** Per run with any figure moved: "LABEL  figure a->b [-gone +come]; …"; "LABEL failed" for a run with no summary. */
  lines: string[];
  /** Each figure summed over the runs both sweeps have: before and after. */
  totals: Record<SweepFigure, [number, number]>;
}

/** What moved from `before` to `after`, run by run, over the runs both have. */
export function compareSweeps(
  before: Map<string, GateSummary | undefined>,
  after: Map<string, GateSummary | undefined>,
): SweepChange {
  const totals = Object.fromEntries(SWEEP_FIGURES.map((f) => [f, [0, 0]])) as Record<
    SweepFigure,
    [number, number]
  >;
  const lines: string[] = [];
  for (const [label, a] of before) {
    if (!after.has(label)) continue;
    const b = after.get(label);
    if (!a || !b) {
      lines.push(`${label} failed ${!a ? "before" : "after"}`);
      continue;
    }
    const moved: string[] = [];
    for (const f of SWEEP_FIGURES) {
      const [x, y] = [count(a[f]), count(b[f])];
      totals[f][0] += x;
      totals[f][1] += y;
      const av = a[f];
      const bv = b[f];
      if (!Array.isArray(av) || !Array.isArray(bv)) {
        if (x !== y) moved.push(`${f} ${x}->${y}`);
        continue;
      }
      const gone = av.filter((c) => !bv.includes(c));
      const come = bv.filter((c) => !av.includes(c));
      if (gone.length || come.length)
        moved.push(`${f} ${x}->${y} -[${gone.join(", ")}] +[${come.join(", ")}]`);
    }
    if (moved.length) lines.push(`${label}  ${moved.join("; ")}`);
  }
  return { lines, totals };
}
