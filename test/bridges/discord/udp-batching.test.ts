// Reading a real UDP socket once per tick while packets flow: packets sent between ticks wait in the
// socket and all come at the next tick; after five quiet ticks reading is per packet again.
import { createSocket, type Socket } from "node:dgram";
import { once } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import { UdpBatching } from "../../../bridges/discord/udp-batching.ts";
import { VoiceClock } from "../../../bridges/discord/voice-clock.ts";
import { VirtualClock } from "../../../src/session/clock.ts";

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
  const port = rx.address().port;
  const send = async (n: number) => {
    for (let i = 0; i < n; i++)
      await new Promise<void>((r) => tx.send(Buffer.of(i), port, "127.0.0.1", () => r()));
  };
  return { rx, send };
}

const settle = () => new Promise((r) => setTimeout(r, 30));

describe("UdpBatching", () => {
  it("holds packets between ticks and reads them all at the next, then goes back to per packet", async () => {
    const { rx, send } = await pair();
    const clock = new VirtualClock();
    const batching = UdpBatching.of(rx, new VoiceClock(clock));
    expect(batching).toBeDefined();
    const got: number[] = [];
    rx.on("message", (m) => {
      got.push(m[0]!);
      batching!.packet();
    });
    await send(1);
    await settle();
    expect(got).toEqual([0]); // the first packet is read at once, and batching starts
    await send(40); // more than one libuv read round
    await settle();
    expect(got).toHaveLength(1); // waiting in the socket
    clock.advance(20);
    await settle();
    expect(got).toHaveLength(41);
    for (let i = 0; i < 5; i++) clock.advance(20); // quiet ticks: per packet again
    await send(2);
    await settle();
    expect(got).toHaveLength(43);
    batching!.close();
  });
});
