// Reading a real UDP socket once per voice-clock tick while members' packets flow: what is sent
// between ticks waits in the socket (libuv no longer reads it: no 'message' event) and comes at the
// next tick, in order and intact, followed by afterRead; after five quiet ticks, or on close(),
// libuv reads as packets come again.

import { createSocket, type Socket } from "node:dgram";
import { once } from "node:events";
import { closeSync, openSync } from "node:fs";
import { createRequire } from "node:module";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { IDLE_TICKS, UdpTickReads } from "../../../bridges/discord/udp-tick-reads.ts";
import { VoiceClock } from "../../../bridges/discord/voice-clock.ts";
import { VirtualClock } from "../../../src/core/clock.ts";

const sockets: Socket[] = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s.close();
});

async function pair() {
  const rx = createSocket("udp4");
  const tx = createSocket("udp4");
  sockets.push(rx, tx);
  rx.bind(0, "127.0.0.1");
  await once(rx, "listening");
  rx.setRecvBufferSize(1 << 20); // 150 queued datagrams fit whatever the system's default
  const port = rx.address().port;
  let seq = 0;
  /** n datagrams of `bytes` bytes each, numbered from where the last call stopped. */
  const send = async (n: number, bytes = 60) => {
    for (let i = 0; i < n; i++) {
      const b = Buffer.alloc(bytes, seq & 0xff);
      b.writeUInt16BE(seq++, 0);
      await new Promise<void>((r) => tx.send(b, port, "127.0.0.1", () => r()));
    }
  };
  return { rx, send };
}

/** A socket libuv polls throughout, and a sender to it: settle()'s marker. */
let probe: { rx: Socket; tx: Socket };
beforeAll(async () => {
  probe = { rx: createSocket("udp4"), tx: createSocket("udp4") };
  probe.rx.bind(0, "127.0.0.1");
  await once(probe.rx, "listening");
});
afterAll(() => {
  probe.rx.close();
  probe.tx.close();
});

/**
 * Lets the loop run until libuv has read every socket it still polls and that has something
 * queued: a marker datagram sent now is ready after them, and its 'message' comes in the same
 * poll as theirs or a later one; the poll's every callback has run by the next setImmediate.
 */
async function settle(): Promise<void> {
  const marker = once(probe.rx, "message");
  probe.tx.send(Buffer.of(0), probe.rx.address().port, "127.0.0.1");
  await marker;
  await new Promise((r) => setImmediate(r));
}

function reads(rx: Socket) {
  const clock = new VirtualClock();
  const viaLibuv: number[] = [];
  const atTick: number[] = [];
  const log: string[] = [];
  let tr: UdpTickReads | undefined;
  const onMessage = (m: Buffer) => {
    viaLibuv.push(m.readUInt16BE(0));
    tr?.packet();
  };
  rx.on("message", onMessage);
  tr = UdpTickReads.of(rx, {
    deliver: (m) => {
      // Every byte as sent: the slot holds this datagram and nothing of another.
      expect(m.every((v, i) => i < 2 || v === (m.readUInt16BE(0) & 0xff))).toBe(true);
      atTick.push(m.readUInt16BE(0));
      log.push(`deliver ${m.readUInt16BE(0)}`);
      tr!.packet();
    },
    afterRead: () => log.push("afterRead"),
    oversized: (slot) => log.push(`oversized ${slot}`),
    clock: new VoiceClock(clock),
  });
  return { clock, viaLibuv, atTick, log, tr: tr! };
}

describe("UdpTickReads", () => {
  it("holds packets between ticks and delivers them all at the next one, then afterRead", async () => {
    const { rx, send } = await pair();
    const { clock, viaLibuv, atTick, log, tr } = reads(rx);
    await send(1);
    await settle();
    expect(viaLibuv).toEqual([0]); // the first packet comes as it is read, and tick reading starts
    expect(tr.batching).toBe(true);
    await send(5);
    await settle();
    expect(viaLibuv).toEqual([0]); // waiting in the socket, nobody woken
    expect(atTick).toEqual([]);
    clock.advance(20);
    expect(atTick).toEqual([1, 2, 3, 4, 5]);
    expect(log.at(-1)).toBe("afterRead");
    tr.close();
  });

  it("reads more than one read's worth in one tick, afterRead after each (before the slots are reused)", async () => {
    const { rx, send } = await pair();
    const { clock, atTick, log, tr } = reads(rx);
    await send(1);
    await settle();
    await send(150);
    await settle();
    clock.advance(20);
    expect(atTick).toEqual(Array.from({ length: 150 }, (_, i) => i + 1));
    // 64 slots a read: afterRead after the 64th, the 128th and the 150th.
    const afterReads = log.flatMap((l, i) => (l === "afterRead" ? [i] : []));
    expect(afterReads).toEqual([64, 129, 152]);
    tr.close();
  });

  it(`goes back to reading as packets come after ${IDLE_TICKS} quiet ticks, and tick reading starts again with them`, async () => {
    const { rx, send } = await pair();
    const { clock, viaLibuv, atTick, tr } = reads(rx);
    await send(1);
    await settle();
    // The first tick still counts the packet before it; then IDLE_TICKS without one.
    for (let i = 0; i < IDLE_TICKS; i++) clock.advance(20);
    expect(tr.batching).toBe(true);
    clock.advance(20);
    expect(tr.batching).toBe(false);
    await send(1);
    await settle();
    expect(viaLibuv).toEqual([0, 1]);
    expect(tr.batching).toBe(true);
    await send(2);
    await settle();
    clock.advance(20);
    expect(atTick).toEqual([2, 3]);
    tr.close();
  });

  it("after close(), libuv reads everything again, what was queued first", async () => {
    const { rx, send } = await pair();
    const { viaLibuv, atTick, tr } = reads(rx);
    await send(1);
    await settle();
    await send(2);
    await settle();
    tr.close();
    await settle();
    await send(1);
    await settle();
    expect(viaLibuv).toEqual([0, 1, 2, 3]);
    expect(atTick).toEqual([]);
  });

  it("stops at once when the socket is closed under it (its fd number may be reused)", async () => {
    const { rx, send } = await pair();
    const { clock, atTick, tr } = reads(rx);
    await send(1);
    await settle();
    await send(1);
    await settle();
    sockets.splice(sockets.indexOf(rx), 1);
    rx.close();
    // A socket opened now may get the closed one's descriptor: it must not be read for it.
    const other = createSocket("udp4");
    sockets.push(other);
    other.bind(0, "127.0.0.1");
    await once(other, "listening");
    clock.advance(20);
    expect(atTick).toEqual([]);
    expect(tr.batching).toBe(false);
  });

  it("drops a datagram longer than a slot, and says so", async () => {
    const { rx, send } = await pair();
    const { clock, atTick, log, tr } = reads(rx);
    await send(1);
    await settle();
    await send(1, 3000);
    await send(1);
    await settle();
    clock.advance(20);
    expect(atTick).toEqual([2]);
    expect(log).toContain("oversized 2048");
    tr.close();
  });

  it("the addon names its arguments when given wrong ones", () => {
    const addon = createRequire(import.meta.url)("../../../native/build/discord-voice-socket.node") as {
      drain(...args: unknown[]): number;
    };
    expect(() => addon.drain("3", new Uint8Array(8), 4, new Int32Array(2))).toThrow(/drain\(fd/);
    expect(() => addon.drain(3, new Int8Array(8), 4, new Int32Array(2))).toThrow(/slab: Uint8Array/);
    expect(() => addon.drain(3, new Uint8Array(8), 0, new Int32Array(2))).toThrow(/slotBytes/);
    expect(() => addon.drain(3, new Uint8Array(8), 4, new Uint32Array(2))).toThrow(/lengths: Int32Array/);
    // Not a socket: the error says which descriptor and why.
    const fd = openSync(import.meta.filename, "r");
    try {
      expect(() => addon.drain(fd, new Uint8Array(8), 4, new Int32Array(2))).toThrow(
        new RegExp(`recvmmsg on fd ${fd} failed: Socket operation on non-socket`),
      );
    } finally {
      closeSync(fd);
    }
  });
});
