// The AudioSocket server over real TCP on loopback, driven by a client that speaks the
// published framing the way Asterisk does, with real speech (espeak-ng, resampled by sox).
import { afterEach, describe, expect, it } from "vitest";
import type { AudioSocketCallTransport } from "../../../bridges/audiosocket/call-transport.ts";
import type { ConnectionLimits } from "../../../bridges/audiosocket/connection.ts";
import { type AudioSocketServer, startAudioSocketServer } from "../../../bridges/audiosocket/server.ts";
import { systemClock } from "../../../src/core/clock.ts";
import { silentLogger } from "../../../src/core/log.ts";
import { seededBytes, seededRandom } from "../../helpers/noise.ts";
import { speak } from "../../helpers/speech.ts";
import { until } from "../../helpers/until.ts";
import { AsteriskClient, audioFrame, frame, uuidFrame } from "./client.ts";

interface Call {
  transport: AudioSocketCallTransport;
  frames: Int16Array[];
  digits: string[];
  played: number[];
  ended: string[];
}

const UUID = "40325ec2-5efd-4bd3-805f-53576e581d13";
let server: AudioSocketServer | undefined;
const clients: AsteriskClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await server?.close();
  server = undefined;
});

async function start(
  opts: { limits?: Partial<ConnectionLimits>; onCall?: (call: Call) => void } = {},
): Promise<{ calls: Call[]; port: number }> {
  const calls: Call[] = [];
  server = await startAudioSocketServer({
    host: "127.0.0.1",
    port: 0,
    log: silentLogger,
    clock: systemClock,
    ...(opts.limits ? { limits: opts.limits } : {}),
    onCall(transport) {
      const call: Call = { transport, frames: [], digits: [], played: [], ended: [] };
      calls.push(call);
      transport.attach({
        audio: (f) => call.frames.push(f.slice()),
        dtmf: (d) => call.digits.push(d),
        played: (ms) => call.played.push(ms),
        ended: (r) => call.ended.push(r),
      });
      opts.onCall?.(call);
    },
  });
  return { calls, port: server.port };
}

async function client(port: number): Promise<AsteriskClient> {
  const c = await AsteriskClient.connect(port);
  clients.push(c);
  return c;
}

function joined(frames: Int16Array[]): Int16Array {
  const out = new Int16Array(frames.reduce((n, f) => n + f.length, 0));
  let at = 0;
  for (const f of frames) {
    out.set(f, at);
    at += f.length;
  }
  return out;
}

/** `pcm` padded with silence to whole 20 ms frames. */
function padded(pcm: Int16Array, rate: number): Int16Array {
  const n = rate / 50;
  const out = new Int16Array(Math.ceil(pcm.length / n) * n);
  out.set(pcm);
  return out;
}

describe.each([8000, 16000])("an AudioSocket call at %d Hz", (rate) => {
  it("delivers the caller's speech and DTMF, plays the agent back in the same format, ends on hang-up", async () => {
    const caller = speak("I would like to check my order status", { rate });
    const greeting = speak("Hello, how can I help?", { rate });
    const { calls, port } = await start({ onCall: (call) => call.transport.play(greeting) });
    const c = await client(port);
    c.send(uuidFrame(UUID));
    await c.stream(caller, rate);
    c.send(frame(0x03, Buffer.from("1")));
    c.send(frame(0x03, Buffer.from("#")));
    await until(() => c.audio().pcm.length >= padded(greeting, rate).length, "the greeting");
    await until(() => calls[0]?.digits.length === 2, "the digits");
    c.send(frame(0x00));
    await until(() => calls[0]?.ended.length === 1, "the end of the call");

    const call = calls[0]!;
    expect(call.transport.info).toMatchObject({ callId: UUID, transport: "audiosocket" });
    expect(call.transport.inputRate).toBe(rate);
    expect(call.transport.output).toEqual({ kind: "pcm", rate });
    expect(call.frames.every((f) => f.length === rate / 50)).toBe(true);
    expect(joined(call.frames)).toEqual(padded(caller, rate));
    expect(call.digits).toEqual(["1", "#"]);
    const back = c.audio();
    expect(back.kinds).toEqual(new Set([rate === 8000 ? 0x10 : 0x12]));
    expect(back.frameBytes).toEqual(new Set([(rate / 50) * 2]));
    expect(back.pcm).toEqual(padded(greeting, rate));
    expect(call.transport.playedMs()).toBeCloseTo((greeting.length / rate) * 1000, 6);
    expect(call.played.at(-1)).toBeCloseTo((greeting.length / rate) * 1000, 6);
    expect(call.ended).toEqual(["hang-up from Asterisk"]);
    await until(() => server!.stats.active === 0, "the connection to close");
    expect(server!.stats).toMatchObject({
      connections: 1,
      calls: 1,
      dtmf: 2,
      badFrames: 0,
      truncatedFrames: 0,
    });
  });
});

describe("the AudioSocket server", () => {
  it("hangs up from our side with a hang-up frame, then the socket closes", async () => {
    const { calls, port } = await start();
    const c = await client(port);
    c.send(uuidFrame(UUID));
    c.send(audioFrame(new Int16Array(160), 8000));
    await until(() => calls.length === 1, "the call");
    await calls[0]!.transport.hangUp("goodbye said");
    expect(c.received.at(-1)).toEqual({ kind: 0x00, payload: Buffer.alloc(0) });
    await until(() => c.closed, "the client socket to close");
    expect(calls[0]!.ended).toEqual(["hang-up (goodbye said)"]);
    await expect(calls[0]!.transport.transfer("+15550100")).rejects.toThrow(/cannot transfer/);
  });

  it("starts at 8 kHz when no audio follows the UUID in time, with DTMF held until then", async () => {
    const { calls, port } = await start({ limits: { audioWaitMs: 150 } });
    const c = await client(port);
    c.send(Buffer.concat([uuidFrame(UUID), frame(0x03, Buffer.from("7"))]));
    await until(() => calls.length === 1, "the call");
    expect(calls[0]!.transport.inputRate).toBe(8000);
    expect(calls[0]!.digits).toEqual(["7"]);
    // Audio at another rate than the call's is dropped and counted.
    c.send(audioFrame(new Int16Array(320), 16000));
    c.send(audioFrame(new Int16Array(160), 8000));
    await until(() => calls[0]!.frames.length === 1, "the 8 kHz frame");
    expect(server!.stats.rateMismatchFrames).toBe(1);
  });

  it("closes a connection that sends no UUID in time", async () => {
    const { calls, port } = await start({ limits: { handshakeTimeoutMs: 150 } });
    const c = await client(port);
    await until(() => c.closed, "the server to close the silent connection");
    expect(calls).toEqual([]);
    expect(server!.stats).toMatchObject({ handshakeTimeouts: 1, active: 0, calls: 0 });
  });

  it("closes a connection that opens with garbage", async () => {
    const { calls, port } = await start();
    const c = await client(port);
    c.send(Buffer.from("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    await until(() => c.closed, "the server to close the connection");
    expect(calls).toEqual([]);
    expect(server!.stats).toMatchObject({ garbageClosed: 1, active: 0 });
  });

  it("skips unknown kinds and impossible lengths mid-call, and closes a connection that keeps sending them", async () => {
    const { calls, port } = await start({ limits: { maxBadFrames: 5 } });
    const c = await client(port);
    c.send(uuidFrame(UUID));
    c.send(audioFrame(new Int16Array(160).fill(100), 8000));
    c.send(frame(0x42, Buffer.alloc(40_000, 0x10)));
    c.send(frame(0x03, Buffer.from("12")));
    c.send(frame(0x03, Buffer.from("x")));
    c.send(frame(0xff, Buffer.from([0x02])));
    c.send(audioFrame(new Int16Array(160).fill(200), 8000));
    await until(() => calls[0]?.frames.length === 2, "both audio frames");
    expect(calls[0]!.frames.map((f) => f[0])).toEqual([100, 200]);
    expect(server!.stats).toMatchObject({ badFrames: 3, errorFrames: 1, garbageClosed: 0 });
    for (let i = 0; i < 3; i++) c.send(frame(0x42 + i, Buffer.alloc(3)));
    await until(() => c.closed, "the server to close the connection");
    expect(calls[0]!.ended).toEqual(["garbage: more than 5 bad frames"]);
    expect(server!.stats).toMatchObject({ badFrames: 6, garbageClosed: 1, active: 0 });
  });

  it("drops audio that arrives faster than real time, keeping the call", async () => {
    const { calls, port } = await start({ limits: { maxAheadMs: 200 } });
    const c = await client(port);
    c.send(uuidFrame(UUID));
    const burst: Buffer[] = [];
    for (let i = 0; i < 250; i++) burst.push(audioFrame(new Int16Array(160), 8000));
    c.send(Buffer.concat(burst));
    await until(
      () => calls.length === 1 && calls[0]!.frames.length + server!.stats.floodDroppedFrames === 250,
      "the burst",
    );
    expect(server!.stats.floodDroppedFrames).toBeGreaterThan(0);
    expect(calls[0]!.ended).toEqual([]);
  });

  it("counts a frame cut off by the connection closing, and ends the call", async () => {
    const { calls, port } = await start();
    const c = await client(port);
    c.send(uuidFrame(UUID));
    c.send(audioFrame(new Int16Array(160), 8000));
    await until(() => calls.length === 1, "the call");
    c.send(audioFrame(new Int16Array(160), 8000).subarray(0, 100));
    await new Promise<void>((resolve) => c.socket.end(resolve));
    await until(() => calls[0]!.ended.length === 1, "the end of the call");
    expect(calls[0]!.ended).toEqual(["socket closed"]);
    expect(server!.stats).toMatchObject({ truncatedFrames: 1, active: 0 });
  });

  it("ends every open call when it closes", async () => {
    const { calls, port } = await start();
    const a = await client(port);
    const b = await client(port);
    for (const [c, id] of [
      [a, UUID],
      [b, "00000000-0000-4000-8000-000000000001"],
    ] as const) {
      c.send(uuidFrame(id));
      c.send(audioFrame(new Int16Array(160), 8000));
    }
    await until(() => calls.length === 2, "both calls");
    expect(calls.map((x) => x.transport.info.callId).sort()).toEqual([
      "00000000-0000-4000-8000-000000000001",
      UUID,
    ]);
    await server!.close();
    await until(() => calls.every((x) => x.ended.length === 1), "both calls to end");
    expect(calls.map((x) => x.ended[0])).toEqual(["server closing", "server closing"]);
    expect(server!.stats.active).toBe(0);
    server = undefined;
  });

  it("survives seeded garbage after the UUID in random chunks, and still takes a proper call after", async () => {
    const { calls, port } = await start({ limits: { maxBadFrames: 1000 } });
    for (let seed = 1; seed <= 12; seed++) {
      const c = await client(port);
      const rnd = seededRandom(seed);
      const junk = Buffer.concat([
        uuidFrame(UUID),
        audioFrame(new Int16Array(160), 8000),
        seededBytes(40_000, seed),
      ]);
      for (let at = 0; at < junk.length; ) {
        const n = 1 + Math.floor(rnd() * 3000);
        c.send(junk.subarray(at, at + n));
        at += n;
      }
      c.close();
    }
    await until(
      () => server!.stats.connections === 12 && server!.stats.active === 0,
      "the garbage connections to close",
    );
    expect(calls.every((x) => x.ended.length === 1)).toBe(true);
    const good = await client(port);
    good.send(uuidFrame(UUID));
    good.send(audioFrame(new Int16Array(160).fill(5), 8000));
    await until(() => calls.at(-1)?.frames.length === 1 && calls.length === 13, "a proper call");
    expect(calls.at(-1)!.frames[0]![0]).toBe(5);
  });
});
