import dgram from "node:dgram";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { monotonicNowMs } from "../../../../bench/lib/monotonic-clock.ts";
import { rtpSender } from "../../../../bridges/sip/rtp/native-sender.ts";

// The benchmarks time the agent's RTP by the kernel's receive stamps (bench/lib/sip-call-media.ts),
// so a load generator that reads late does not count its own delay as the bridge's. These are
// the stamps' two promises: each message gets its own, and it is the arrival, not the read.

/**
 * A thread that sends `count` datagrams to `port` every 20 ms, each carrying its index and send time
 * on the monotonic clock (process.hrtime's, the stamps' clock, one for every thread).
 */
function sender(port: number, count: number): Worker {
  return new Worker(
    `const s = require("node:dgram").createSocket("udp4");
     let i = 0;
     const t = setInterval(() => {
       const b = Buffer.alloc(12);
       b.writeUInt32BE(i++);
       b.writeDoubleBE(Number(process.hrtime.bigint()) / 1e6, 4);
       s.send(b, ${port}, "127.0.0.1");
       if (i === ${count}) { clearInterval(t); setTimeout(() => s.close(), 50); }
     }, 20);`,
    { eval: true },
  );
}

describe("rxStampMs (the RTP addon's kernel receive stamps)", () => {
  it("gives each datagram its arrival time, however late the loop reads it", async () => {
    const addon = rtpSender();
    const fd = addon.bindUdp("127.0.0.1", 0);
    expect(fd).toBeGreaterThan(0);
    const socket = dgram.createSocket("udp4");
    await new Promise<void>((r) => socket.bind({ fd }, () => r()));
    expect(addon.rxStampMs(fd)).toBeNaN(); // nothing read yet; stamping is on from here
    const count = 12;
    const seen: Array<{ i: number; sent: number; stamp: number; read: number }> = [];
    const done = new Promise<void>((resolve) => {
      socket.on("message", (m) => {
        const read = monotonicNowMs();
        seen.push({ i: m.readUInt32BE(0), sent: m.readDoubleBE(4), stamp: addon.rxStampMs(fd), read });
        // After the third, the loop is busy for 120 ms: ~6 datagrams queue up and are read in a burst.
        if (seen.length === 3) {
          const t = performance.now();
          while (performance.now() - t < 120);
        }
        if (seen.length === count) resolve();
      });
    });
    const w = sender(socket.address().port, count);
    await done;
    await w.terminate();
    socket.close();

    expect(seen.map((s) => s.i)).toEqual([...Array(count).keys()]);
    for (const s of seen) {
      // Stamped when it came: after its send, before its read (both read on the stamps' clock)…
      expect(s.stamp).toBeGreaterThan(s.sent);
      expect(s.stamp).toBeLessThan(s.read);
    }
    // …each its own stamp, ~20 ms apart, even those read in one burst after the stall.
    const burst = seen.filter((s) => s.read - s.stamp > 40);
    expect(burst.length).toBeGreaterThanOrEqual(2);
    for (let k = 1; k < seen.length; k++) expect(seen[k]!.stamp).toBeGreaterThan(seen[k - 1]!.stamp);
    const readSpan = burst.at(-1)!.read - burst[0]!.read;
    const stampSpan = burst.at(-1)!.stamp - burst[0]!.stamp;
    expect(stampSpan).toBeGreaterThan(readSpan + 10);
  });

  it("says which argument is wrong", () => {
    expect(() => rtpSender().rxStampMs(-1)).toThrow(/rxStampMs\(fd\)/);
  });
});
