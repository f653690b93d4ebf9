// The RTP worker for real: a worker thread binding real UDP ports, a peer socket playing the
// caller, and the same RtpCallTransport the SIP server makes, on the monotonic clock (the worker
// paces on real time, so these tests wait for what they check and never time it).
import { Worker } from "node:worker_threads";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { RtpCallTransport } from "../../../../bridges/sip/rtp/call-transport.ts";
import { buildTelephoneEvent, dtmfEvent } from "../../../../bridges/sip/rtp/dtmf.ts";
import { buildRtp } from "../../../../bridges/sip/rtp/rtp-packet.ts";
import { MAX_BATCHES_BEHIND } from "../../../../bridges/sip/rtp/worker-backlog.ts";
import { type RtpWorker, startRtpWorker } from "../../../../bridges/sip/rtp/worker-pool.ts";
import type { TransportListener } from "../../../../bridges/transport.ts";
import { mulawDecode, mulawEncode } from "../../../../codecs/g711.ts";
import { concatPcm } from "../../../../codecs/pcm.ts";
import { systemClock } from "../../../../src/core/clock.ts";
import { silentLogger } from "../../../../src/core/log.ts";
import { until } from "../../../helpers/until.ts";
import { freeEvenRange } from "./ports.ts";
import { media, Peer } from "./rig.ts";
import { rms, sine, toneHz } from "./tone.ts";

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function worker(evenPorts = 4, onShed?: (frames: number, bytes: number) => void): Promise<RtpWorker> {
  const base = await freeEvenRange(evenPorts);
  const w = startRtpWorker({
    host: "127.0.0.1",
    ports: `${base}-${base + 2 * evenPorts - 1}`,
    log: silentLogger,
    ...(onShed ? { onShed } : {}),
  });
  cleanup.push(() => w.close());
  return w;
}

async function peer(): Promise<Peer> {
  const p = await Peer.open();
  cleanup.push(() => p.close());
  return p;
}

interface Heard {
  frames: Int16Array[];
  digits: string[];
  played: number[];
  ended: string[];
  hangUps: string[];
}

async function call(w: RtpWorker, peerPort: number) {
  const endpoint = await w.open();
  const heard: Heard = { frames: [], digits: [], played: [], ended: [], hangUps: [] };
  const transport = new RtpCallTransport({
    info: { callId: "worker-call", transport: "sip", params: {} },
    endpoint,
    media: media(peerPort),
    control: {
      hangUp: async (reason) => {
        heard.hangUps.push(reason);
      },
      transfer: async () => {},
    },
    clock: systemClock,
    log: silentLogger,
    mediaTimeoutMs: 30_000,
  });
  const listener: TransportListener = {
    audio: (f) => heard.frames.push(f.slice()),
    dtmf: (d) => heard.digits.push(d),
    played: (ms) => heard.played.push(ms),
    ended: (r) => heard.ended.push(r),
  };
  transport.attach(listener);
  cleanup.push(async () => transport.end("test over"));
  return { transport, heard, port: endpoint.port };
}

async function sendPcmu(p: Peer, port: number, pcm: Int16Array): Promise<void> {
  for (let i = 0; i * 160 < pcm.length; i++)
    await p.send(
      buildRtp({
        payloadType: 0,
        sequence: 7000 + i,
        timestamp: 90_000 + i * 160,
        ssrc: 0xbeef,
        payload: mulawEncode(pcm.subarray(i * 160, (i + 1) * 160)),
      }),
      port,
    );
}

describe("SIP media in the RTP worker thread", () => {
  it("carries the caller's tone and digits to the session and the agent's voice, paced, to the caller", async () => {
    const w = await worker();
    const caller = await peer();
    const { transport, heard, port } = await call(w, caller.port);
    expect(transport.inputRate).toBe(8000);

    const tone = sine(440, 8000, 8000, 6000);
    await sendPcmu(caller, port, tone);
    await until(() => heard.frames.length >= 50, "the caller's 50 frames through the worker");
    const got = concatPcm(heard.frames);
    expect(got.length).toBe(tone.length);
    expect(Math.abs(toneHz(got, 8000) - 440)).toBeLessThan(2);

    // One RFC 4733 press: start, then the end packet three times.
    const event = dtmfEvent("7");
    const packets = [
      buildTelephoneEvent({ event, end: false, volume: 10, duration: 160 }),
      ...[0, 1, 2].map(() => buildTelephoneEvent({ event, end: true, volume: 10, duration: 800 })),
    ];
    for (const [i, payload] of packets.entries())
      await caller.send(
        buildRtp({
          payloadType: 101,
          sequence: 7100 + i,
          timestamp: 200_000,
          ssrc: 0xbeef,
          payload,
          marker: i === 0,
        }),
        port,
      );
    await until(() => heard.digits.length === 1, "the digit");

    const reply = sine(1000, 8000, 4000, 7000);
    const before = caller.received.length;
    transport.play(reply);
    expect(transport.queuedMs()).toBe(500);
    await until(() => transport.playedMs() === 500, "the whole reply heard");
    expect(heard.played.at(-1)).toBe(500);
    expect(heard.played.every((v, i) => i === 0 || v > heard.played[i - 1]!)).toBe(true);
    await until(() => caller.received.length >= before + 25, "25 reply packets");
    const stream = caller.received;
    for (let i = 1; i < stream.length; i++) {
      expect(stream[i]!.sequence).toBe((stream[i - 1]!.sequence + 1) & 0xffff);
      expect(stream[i]!.timestamp).toBe((stream[i - 1]!.timestamp + 160) >>> 0);
    }
    const audio = stream.filter((p) => !p.payload.every((b) => b === 0xff));
    expect(audio).toHaveLength(25);
    const sent = mulawDecode(Uint8Array.from(audio.flatMap((p) => [...p.payload])));
    expect(Math.abs(toneHz(sent, 8000) - 1000)).toBeLessThan(2);
    expect(Math.abs(rms(sent) - rms(reply)) / rms(reply)).toBeLessThan(0.05);
  });

  it("clear(): queued equals heard at once, and the next reply is heard to its end on the same timeline", async () => {
    const w = await worker();
    const caller = await peer();
    const { transport, heard } = await call(w, caller.port);
    transport.play(sine(500, 8000, 8000 * 5, 5000));
    await until(() => transport.playedMs() >= 200, "some of the long reply heard");
    transport.clear();
    const at = transport.playedMs();
    expect(transport.queuedMs()).toBe(at);
    expect(at).toBeLessThan(5000);
    transport.play(sine(700, 8000, 1600, 5000));
    expect(transport.queuedMs()).toBe(at + 200);
    await until(() => transport.playedMs() === at + 200, "the second reply heard to its end");
    expect(heard.played.at(-1)).toBe(at + 200);
    // What went out after the clear is the packets sent before it reached the worker, then 200 ms.
    const audioPackets = caller.received.filter((p) => !p.payload.every((b) => b === 0xff)).length;
    expect(audioPackets * 20).toBeGreaterThanOrEqual(at + 200);
  });

  it("frees every port: one opened for a call that never started, and a call's own when it ends with its counts", async () => {
    const w = await worker(2);
    const unused = await w.open();
    expect(w.inUse).toBe(1);
    unused.close();
    const caller = await peer();
    const { transport, heard, port } = await call(w, caller.port);
    await sendPcmu(caller, port, sine(300, 8000, 1600, 4000));
    await until(() => heard.frames.length === 10, "the caller's 10 frames");
    transport.end("caller hung up");
    await until(() => w.inUse === 0, "both ports back in the pool");
    expect(transport.stats.rx.frames).toBe(10);
    // Both ports of the 2-port range are free again: two more calls can open.
    const a = await w.open();
    const b = await w.open();
    expect(new Set([a.port, b.port]).size).toBe(2);
    a.close();
    b.close();
  });

  it("a stopped worker ends its live calls through signalling, and opens no more ports", async () => {
    const w = await worker();
    const caller = await peer();
    const { heard } = await call(w, caller.port);
    await w.close();
    expect(heard.hangUps).toEqual(["the RTP worker was stopped"]);
    await until(() => heard.ended.length === 1, "the call ended");
    expect(heard.ended).toEqual(["media lost"]);
    await expect(w.open()).rejects.toThrow(/RTP worker was stopped/);
  });

  it("a worker stopped with no call left says so at info level, not as an error (every drained bridge does this)", async () => {
    const logged: Array<{ level: number; msg: string }> = [];
    const log = pino({ level: "info" }, { write: (line: string) => void logged.push(JSON.parse(line)) });
    const base = await freeEvenRange(2);
    const w = startRtpWorker({ host: "127.0.0.1", ports: `${base}-${base + 3}`, log });
    const unused = await w.open();
    unused.close();
    await w.close();
    expect(logged.filter((l) => l.level >= 50)).toEqual([]);
    expect(logged.map((l) => l.msg)).toContain("the RTP worker was stopped");
  });

  it("a worker stopped while it still loads stops cleanly (a bridge closed as soon as it started)", async () => {
    // Terminating a thread inside a native addon's init (@discordjs/opus) aborted the whole process.
    // Closes are spread over the time the threads take to load, so one lands inside it.
    const base = await freeEvenRange(2);
    const closes = Array.from({ length: 24 }, async (_, i) => {
      const w = startRtpWorker({ host: "127.0.0.1", ports: `${base}-${base + 3}`, log: silentLogger });
      await new Promise((r) => setTimeout(r, i * 20));
      await w.close();
      await expect(w.open()).rejects.toThrow(/RTP worker was stopped/);
    });
    await Promise.all(closes);
  });

  it("drops caller frames, counted, while the bridge's thread is stalled, instead of queueing them; then carries them again", async () => {
    let dropped = 0;
    let droppedBytes = 0;
    const w = await worker(4, (frames, bytes) => {
      dropped += frames;
      droppedBytes += bytes;
    });
    // The caller sends from its own thread, paced on real time, so it goes on while this one is stopped.
    const frames = 200;
    const sender = new Worker(
      `const { parentPort, workerData } = require("node:worker_threads");
       const s = require("node:dgram").createSocket("udp4");
       s.bind(0, "127.0.0.1", () => parentPort.postMessage(s.address().port));
       parentPort.once("message", (port) => {
         const start = performance.now();
         let i = 0;
         const tick = () => {
           const p = Buffer.alloc(172, 0xff);
           p[0] = 0x80; p[1] = 0; p.writeUInt16BE(i & 0xffff, 2); p.writeUInt32BE(i * 160, 4); p.writeUInt32BE(0xbeef, 8);
           s.send(p, port, "127.0.0.1");
           if (++i < workerData.frames) setTimeout(tick, Math.max(0, start + i * 20 - performance.now()));
           else setTimeout(() => { s.close(); parentPort.postMessage("done"); }, 50);
         };
         tick();
       });`,
      { eval: true, workerData: { frames } },
    );
    cleanup.push(async () => {
      await sender.terminate();
    });
    const senderPort = await new Promise<number>((r) => sender.once("message", r));
    const { heard, port } = await call(w, senderPort);
    const done = new Promise((r) => sender.once("message", r));
    sender.postMessage(port);
    await until(() => heard.frames.length >= 10, "the first caller frames");
    // This thread stops for 2 s, as a starved bridge's loop does.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2000);
    await done;
    await until(() => heard.frames.length + dropped >= frames, "every frame carried or counted");
    // What queued was bounded: half a second of batches went through, the rest of the stall was dropped.
    expect(dropped).toBeGreaterThan(30);
    expect(dropped).toBeLessThan(100 - MAX_BATCHES_BEHIND / 2 + 10);
    expect(droppedBytes).toBe(dropped * 320);
    expect(heard.frames.length + dropped).toBe(frames);
    // Before and after the stall the frames came through.
    expect(heard.frames.length).toBeGreaterThan(frames - 100);
  });
});
