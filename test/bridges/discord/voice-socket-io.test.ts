// A node:dgram socket read straight by the addon: reached through its handle once it is bound
// (not before), and after dgram closes it, its descriptor reads negative at once and drain()
// refuses rather than read a number that may be another socket's now.
import { createSocket, type Socket } from "node:dgram";
import { once } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { voiceSocketIo } from "../../../bridges/discord/voice-socket-io.ts";
import { until } from "../../helpers/until.ts";

const sockets: Socket[] = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s.close();
});

describe("voiceSocketIo", () => {
  it("reaches a bound socket's descriptor, and reads what is queued on it", async () => {
    const rx = createSocket("udp4");
    const tx = createSocket("udp4");
    sockets.push(rx, tx);
    expect(voiceSocketIo(rx)).toBeUndefined(); // no descriptor before bind
    rx.bind(0, "127.0.0.1");
    await once(rx, "listening");
    const io = voiceSocketIo(rx)!;
    expect(io.fd()).toBeGreaterThan(2);
    io.pauseLibuv();
    const viaLibuv: Buffer[] = [];
    rx.on("message", (m) => viaLibuv.push(m));
    for (const n of [1, 300]) {
      await new Promise<void>((r) =>
        tx.send(Buffer.alloc(n, n & 0xff), rx.address().port, "127.0.0.1", () => r()),
      );
    }
    const slab = new Uint8Array(4 * 512);
    const lengths = new Int32Array(4);
    // Read as they are queued (both, on loopback, by the time the sends complete), each into the next slot.
    let read = 0;
    const drainMore = () => {
      read += io.drain(slab.subarray(read * 512), 512, lengths.subarray(read));
      return read >= 2;
    };
    await until(drainMore, "both datagrams read", 5_000);
    expect(read).toBe(2);
    expect([...lengths.subarray(0, 2)]).toEqual([1, 300]);
    expect(slab[0]).toBe(1);
    const fill = 300 & 0xff;
    expect(slab.subarray(512, 812).every((v) => v === fill)).toBe(true);
    expect(io.drain(slab, 512, lengths)).toBe(0); // nothing left
    io.resumeLibuv();
    await new Promise<void>((r) => tx.send(Buffer.of(9), rx.address().port, "127.0.0.1", () => r()));
    await once(rx, "message");
    expect(viaLibuv).toEqual([Buffer.of(9)]);
  });

  it("after dgram closes the socket, its descriptor reads negative and drain() refuses", async () => {
    const s = createSocket("udp4");
    s.bind(0, "127.0.0.1");
    await once(s, "listening");
    const io = voiceSocketIo(s)!;
    s.close();
    expect(io.fd()).toBeLessThan(0);
    expect(() => io.drain(new Uint8Array(64), 32, new Int32Array(2))).toThrow(/closed/);
    io.resumeLibuv(); // harmless on a closed socket
    io.pauseLibuv();
  });
});
