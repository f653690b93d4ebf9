// GC pauses of a process run with --trace-gc, from its log (stdout), read a stretch at a time:
// each read() returns the pauses logged since the previous one. V8 prefixes each line with
// [pid:isolate]; the bridge's main thread is the isolate with the most collections (it
// allocates far more than its worker threads), the others are workers (VAD, RTP).
import { closeSync, openSync, readSync, statSync } from "node:fs";

const LINE =
  /^\[\d+:(0x[0-9a-f]+)\]\s+\d+ ms: ([A-Za-z -]+?) [0-9.]+ \([0-9.]+\) -> [0-9.]+ \([0-9.]+\) MB,.*? ([0-9.]+) \/ [0-9.]+ ms/;

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
  readonly #counts = new Map<string, number>();

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
      if (!m) continue;
      const isolate = m[1]!;
      this.#counts.set(isolate, (this.#counts.get(isolate) ?? 0) + 1);
      seen.push({ isolate, kind: m[2]!, pause: Number(m[3]) });
    }
    let main = "";
    for (const [isolate, n] of this.#counts) if (n > (this.#counts.get(main) ?? -1)) main = isolate;
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
