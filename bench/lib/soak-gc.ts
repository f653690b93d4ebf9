// GC pauses of a process run with --trace-gc (or --trace-gc-nvp), from its log (stdout), read a
// stretch at a time (the memory reducer's "Mark-Compact (reduce)" included):
// each read() returns the pauses logged since the previous one. V8 prefixes each line with
// [pid:isolate]; the bridge's main thread is the isolate whose collection is logged first (it
// collects while the bridge's modules load, before any worker thread exists), the others are
// workers (VAD, RTP). Not the isolate with the most collections: with SIP's media on a native
// thread, the VAD worker collects more often than the main thread for the first minutes of a run.
import { closeSync, openSync, readSync, statSync } from "node:fs";

const LINE =
  /^\[\d+:(0x[0-9a-f]+)\]\s+\d+ ms: ([A-Za-z -]+?)(?: \([a-z ]+\))? [0-9.]+ \([0-9.]+\) -> [0-9.]+ \([0-9.]+\) MB,.*? ([0-9.]+) \/ [0-9.]+ ms/;

/** The same from --trace-gc-nvp (name=value pairs, each phase's time: for finding where a pause goes). */
const NVP_LINE = /^\[\d+:(0x[0-9a-f]+)(?::\d+)?\]\s+\d+ ms: pause=([0-9.]+) .*?\bgc=([a-z]+)/;

export interface GcPauses {
  mainMax: number;
  mainTotal: number;
  workersMax: number;
  /** Full (mark-compact) collections of the main thread. */
  major: number;
  minor: number;
}

export class GcTrace {
  readonly #path: string;
  #offset = 0;
  #rest = "";
  #main: string | undefined;

  constructor(path: string) {
    this.#path = path;
  }

  read(): GcPauses {
    const size = statSync(this.#path).size;
    const buf = Buffer.alloc(Math.max(0, size - this.#offset));
    if (buf.length) {
      const fd = openSync(this.#path, "r");
      readSync(fd, buf, 0, buf.length, this.#offset);
      closeSync(fd);
      this.#offset = size;
    }
    const text = this.#rest + buf.toString("utf8");
    const lines = text.split("\n");
    this.#rest = lines.pop() ?? "";
    const seen: { isolate: string; kind: string; pause: number }[] = [];
    for (const line of lines) {
      const m = LINE.exec(line);
      const nvp = m ? undefined : NVP_LINE.exec(line);
      if (!m && !nvp) continue;
      const isolate = (m ?? nvp)![1]!;
      this.#main ??= isolate;
      if (m) seen.push({ isolate, kind: m[2]!, pause: Number(m[3]) });
      else
        seen.push({ isolate, kind: nvp![3] === "mc" ? "Mark-Compact" : "Scavenge", pause: Number(nvp![2]) });
    }
    const main = this.#main;
    const out: GcPauses = { mainMax: 0, mainTotal: 0, workersMax: 0, major: 0, minor: 0 };
    for (const s of seen) {
      if (s.isolate !== main) {
        out.workersMax = Math.max(out.workersMax, s.pause);
        continue;
      }
      out.mainMax = Math.max(out.mainMax, s.pause);
      out.mainTotal += s.pause;
      if (s.kind.startsWith("Mark")) out.major++;
      else out.minor++;
    }
    return out;
  }
}
