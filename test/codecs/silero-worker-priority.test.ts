// The VAD's inference thread yields to the event loop: on Linux it runs a few nice steps below the
// thread that loaded it (codecs/silero-worker.ts), so the event loop and the collector's threads
// get a busy core first.
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadSileroModel } from "../../codecs/vad.ts";

/** Each thread of this process: its name and nice value (/proc/self/task/TID/stat, field 19). */
function threads(): Map<string, { name: string; nice: number }> {
  const out = new Map<string, { name: string; nice: number }>();
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const name = readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim();
      out.set(tid, { name, nice: Number(fields[16]) });
    } catch {
      // a thread that ended while listed
    }
  }
  return out;
}

describe("the VAD's inference thread", () => {
  it("runs five nice steps below the event loop", async () => {
    const before = threads();
    const mainNice = before.get(String(process.pid))!.nice;
    const model = await loadSileroModel();
    // One inference, so the thread is surely up and past its start.
    await model.createStream(16000).probability(new Int16Array(512));
    const added = [...threads()].filter(([tid, t]) => !before.has(tid) && t.name === "WorkerThread");
    expect(added.length).toBeGreaterThanOrEqual(1);
    expect(added.map(([, t]) => t.nice)).toContain(Math.min(19, mainNice + 5));
  });
});
