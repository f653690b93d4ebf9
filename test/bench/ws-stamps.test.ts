import { Buffer } from "node:buffer";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { performanceMsOf } from "../../bench/lib/monotonic-clock.ts";
import { StampedReader, WS_STAMPS_ADDON_PATH } from "../../bench/lib/ws-stamps.ts";
import { until } from "../helpers/until.ts";

// The soak's simulated Twilio reads the bridge's WebSocket frames through native/bench/ws-stamps.c
// so that its own late reads are not counted as the bridge's lateness. What it promises: every
// frame whole (any length, split across writes, fragmented), each stamped when its last byte
// came rather than when the event loop got to it; pings answered; the server's close seen.

/**
 * A WebSocket server on its own thread (so it keeps writing while the test's loop is held),
 * plain net + the RFC 6455 handshake, that plays `script` once a client is connected: each step
 * writes raw bytes (whole frames, or a part of one), then waits `waitMs`. It posts
 * {port}, then {sent: index, at: epoch ms} before each write, {pong: text} for a pong, {done}.
 * `written[0]` counts the steps written, for a test's loop that is held and gets no messages.
 */
function server(
  script: Array<{ hex: string; waitMs: number }>,
  written = new Int32Array(new SharedArrayBuffer(4)),
): Worker {
  return new Worker(
    `const net = require("node:net");
     const crypto = require("node:crypto");
     const { parentPort, workerData: { script, written } } = require("node:worker_threads");
     const srv = net.createServer((sock) => {
       let buf = Buffer.alloc(0), open = false;
       sock.on("data", async (d) => {
         buf = Buffer.concat([buf, d]);
         if (!open) {
           const end = buf.indexOf("\\r\\n\\r\\n");
           if (end < 0) return;
           const key = /sec-websocket-key: *(\\S+)/i.exec(buf.subarray(0, end).toString())[1];
           const accept = crypto.createHash("sha1").update(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest("base64");
           buf = buf.subarray(end + 4);
           open = true;
           sock.write("HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\nSec-WebSocket-Accept: " + accept + "\\r\\n\\r\\n");
           setTimeout(async () => {
             for (let i = 0; i < script.length; i++) {
               parentPort.postMessage({ sent: i, at: Number(process.hrtime.bigint()) / 1e6 });
               sock.write(Buffer.from(script[i].hex, "hex"));
               Atomics.add(written, 0, 1);
               await new Promise((r) => setTimeout(r, script[i].waitMs));
             }
             parentPort.postMessage({ done: true });
           }, 50);
         }
         // Client frames are masked: unmask pongs (opcode 10) and report them.
         while (buf.length >= 6) {
           const len = buf[1] & 0x7f;
           if (len > 125 || buf.length < 6 + len) break;
           const mask = buf.subarray(2, 6);
           const body = Buffer.from(buf.subarray(6, 6 + len).map((b, i) => b ^ mask[i % 4]));
           if ((buf[0] & 0x0f) === 10) parentPort.postMessage({ pong: body.toString() });
           buf = buf.subarray(6 + len);
         }
       });
       sock.on("error", () => {});
     });
     srv.listen(0, "127.0.0.1", () => parentPort.postMessage({ port: srv.address().port }));`,
    { eval: true, workerData: { script, written } },
  );
}

/** A server frame (unmasked): FIN and opcode, then the payload's length in the shortest form. */
function frame(opcode: number, payload: Buffer, fin = true): Buffer {
  const first = (fin ? 0x80 : 0) | opcode;
  const n = payload.length;
  const head =
    n < 126
      ? Buffer.from([first, n])
      : n < 65536
        ? Buffer.from([first, 126, n >> 8, n & 0xff])
        : Buffer.concat([
            Buffer.from([first, 127]),
            (() => {
              const b = Buffer.alloc(8);
              b.writeBigUInt64BE(BigInt(n));
              return b;
            })(),
          ]);
  return Buffer.concat([head, payload]);
}

const text = (s: string) => frame(1, Buffer.from(s));

interface Seen {
  data: string;
  isBinary: boolean;
  stamp: number;
  read: number;
}

interface Read {
  seen: Seen[];
  pongs: string[];
  ended: boolean;
}

/**
 * Plays `steps` to the reader; returns once the server has played them all and what the test
 * expects of them has come (`arrived`).
 */
async function run(
  steps: Array<{ bytes: Buffer; waitMs: number }>,
  arrived: (read: Read) => boolean,
  onMessage?: (seen: Seen[], written: () => number) => void,
): Promise<{ seen: Seen[]; sent: number[]; pongs: string[]; ended: boolean; closed: Promise<void> }> {
  const reader = StampedReader.get();
  if (!reader) throw new Error(`${WS_STAMPS_ADDON_PATH} is not built: run make setup`);
  const written = new Int32Array(new SharedArrayBuffer(4));
  const w = server(
    steps.map((s) => ({ hex: s.bytes.toString("hex"), waitMs: s.waitMs })),
    written,
  );
  const sent: number[] = [];
  const pongs: string[] = [];
  const seen: Seen[] = [];
  let ended = false;
  const port = await new Promise<number>((resolve) => {
    w.on("message", (m: { port?: number; sent?: number; at?: number; pong?: string }) => {
      if (m.port !== undefined) resolve(m.port);
      if (m.sent !== undefined) sent[m.sent] = performanceMsOf(m.at!);
      if (m.pong !== undefined) pongs.push(m.pong);
    });
  });
  const done = new Promise<void>((r) => w.on("message", (m: { done?: boolean }) => m.done && r()));
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`);
  await new Promise<void>((r) => ws.once("open", () => r()));
  const closed = new Promise<void>((r) => ws.once("close", () => r()));
  reader.attach(ws, {
    message: (data, isBinary, stamp) => {
      seen.push({ data: data.toString(), isBinary, stamp, read: performance.now() });
      onMessage?.(seen, () => Atomics.load(written, 0));
    },
    end: () => {
      ended = true;
    },
  });
  await done;
  await until(() => arrived({ seen, pongs, ended }), "what the server played", 5_000);
  await w.terminate();
  return { seen, sent, pongs, ended, closed };
}

describe("ws-stamps (the simulated Twilio's kernel-stamped WebSocket reader)", () => {
  it("stamps each frame when it came, however late the loop reads it", async () => {
    const steps = Array.from({ length: 12 }, (_, i) => ({ bytes: text(`m${i}`), waitMs: 20 }));
    const { seen, sent } = await run(
      steps,
      (r) => r.seen.length === steps.length,
      (s, written) => {
        // After the third, the loop is held until six more frames were written (at least 120 ms,
        // however late a loaded machine runs the server's thread): they queue up and are read in
        // a burst, the first three written 40 ms or more before the loop reads again.
        if (s.length === 3) {
          const t = performance.now();
          while (written() < 9 || performance.now() - t < 120);
        }
      },
    );
    expect(seen.map((s) => s.data)).toEqual(steps.map((_, i) => `m${i}`));
    seen.forEach((s, i) => {
      // The server's send times are its thread's monotonic clock, the stamps' own.
      expect(s.stamp).toBeGreaterThan(sent[i]!);
      expect(s.stamp).toBeLessThan(s.read);
    });
    const burst = seen.filter((s) => s.read - s.stamp > 40);
    expect(burst.length).toBeGreaterThanOrEqual(3);
    // Read together, stamped apart: the burst's stamps span its sends, not its reads.
    const stampSpan = burst.at(-1)!.stamp - burst[0]!.stamp;
    const readSpan = burst.at(-1)!.read - burst[0]!.read;
    expect(stampSpan).toBeGreaterThan(20 * (burst.length - 1) - 15);
    expect(readSpan).toBeLessThan(stampSpan);
  });

  it("reads frames of every length form, split across writes and fragmented, and answers pings", async () => {
    const big = Buffer.alloc(70_000, "b");
    const mid = "m".repeat(300);
    const split = text("x".repeat(200));
    const { seen, sent } = await run(
      [
        { bytes: text(""), waitMs: 10 },
        { bytes: Buffer.concat([text("a"), text(mid)]), waitMs: 10 },
        { bytes: frame(2, big), waitMs: 10 },
        { bytes: frame(9, Buffer.from("hi")), waitMs: 10 },
        { bytes: split.subarray(0, 1), waitMs: 30 },
        { bytes: split.subarray(1, 100), waitMs: 30 },
        { bytes: split.subarray(100), waitMs: 10 },
        { bytes: frame(1, Buffer.from("fra"), false), waitMs: 10 },
        { bytes: frame(0, Buffer.from("gm"), false), waitMs: 10 },
        { bytes: frame(0, Buffer.from("ent")), waitMs: 50 },
      ],
      (r) => r.seen.length === 6,
    );
    expect(seen.map((s) => (s.isBinary ? `binary ${s.data.length}` : s.data))).toEqual([
      "",
      "a",
      mid,
      `binary ${big.length}`,
      "x".repeat(200),
      "fragment",
    ]);
    // The split frame is stamped by the write that completed it, not by its first byte.
    expect(seen[4]!.stamp).toBeGreaterThan(sent[6]!);
  });

  it("answers a ping with a pong and sees the server close the stream", async () => {
    const { pongs, ended, closed } = await run(
      [
        { bytes: frame(9, Buffer.from("hi")), waitMs: 50 },
        { bytes: frame(8, Buffer.from([0x03, 0xe8])), waitMs: 50 },
      ],
      (r) => r.pongs.length === 1 && r.ended,
    );
    expect(pongs).toEqual(["hi"]);
    expect(ended).toBe(true);
    await closed; // the WebSocket itself closes: the simulator's 'close' handler runs as before
  });

  it("keeps reading a socket attached as another one ends (a handle let go names no other socket)", async () => {
    const reader = StampedReader.get()!;
    // The port is listened for at once: a worker's message with no listener yet is lost.
    const open = (w: Worker) => {
      const port = new Promise<number>((r) => w.on("message", (m: { port?: number }) => m.port && r(m.port)));
      return async () => {
        const ws = new WebSocket(`ws://127.0.0.1:${await port}/`);
        await new Promise<void>((r) => ws.once("open", () => r()));
        return ws;
      };
    };
    // B says its word late, after A has ended and B has taken over A's slot; A's socket closes
    // after B is attached, and that must not stop B's reading.
    const a = server([{ hex: frame(8, Buffer.from([0x03, 0xe8])).toString("hex"), waitMs: 100 }]);
    const openA = open(a);
    const b = server([
      { hex: "", waitMs: 300 },
      { hex: text("after").toString("hex"), waitMs: 100 },
    ]);
    const openB = open(b);
    const bDone = new Promise<void>((r) => b.on("message", (m: { done?: boolean }) => m.done && r()));
    const wsB = await openB();
    const wsA = await openA();
    const heard: string[] = [];
    const aClosed = new Promise<void>((r) => wsA.once("close", () => r()));
    reader.attach(wsA, {
      message: () => {},
      end: () => reader.attach(wsB, { message: (data) => heard.push(data.toString()), end: () => {} }),
    });
    await aClosed;
    await bDone;
    await until(() => heard.length > 0, "B's word", 5_000);
    wsB.terminate();
    await Promise.all([a.terminate(), b.terminate()]);
    expect(heard).toEqual(["after"]);
  });

  it("runs its reading thread alone at the nice it is given (a starved load generator must not stamp late)", () => {
    if (!existsSync(WS_STAMPS_ADDON_PATH)) throw new Error(`${WS_STAMPS_ADDON_PATH} is not built`);
    // A fresh process: the reader is started once per process. A higher nice needs no privilege.
    const out = execFileSync(
      process.execPath,
      [
        "-e",
        `const { readdirSync, readFileSync } = require("node:fs");
         const nices = () => readdirSync("/proc/self/task").map((t) =>
           Number(readFileSync("/proc/self/task/" + t + "/stat", "utf8").split(") ")[1].split(" ")[16]));
         const before = nices().length;
         require(process.argv[1]).start(() => {}, 7);
         const after = nices();
         console.log(JSON.stringify({ added: after.length - before, at7: after.filter((n) => n === 7).length,
           othersAsProcess: after.every((n) => n === 7 || n === require("node:os").getPriority()) }));
         process.exit(0);`,
        WS_STAMPS_ADDON_PATH,
      ],
      { encoding: "utf8" },
    );
    expect(JSON.parse(out)).toEqual({ added: 1, at7: 1, othersAsProcess: true });
  });

  it("refuses a nice out of range, with the argument named", () => {
    if (!existsSync(WS_STAMPS_ADDON_PATH)) throw new Error(`${WS_STAMPS_ADDON_PATH} is not built`);
    const addon = createRequire(import.meta.url)(WS_STAMPS_ADDON_PATH) as {
      start(onReady: () => void, nice?: unknown): void;
    };
    for (const bad of [20, -21, 1.5, "5"])
      expect(() => addon.start(() => {}, bad)).toThrow(/nice must be an integer from -20 to 19/);
  });

  it("refuses what is not a socket, with the argument named", () => {
    if (!existsSync(WS_STAMPS_ADDON_PATH)) throw new Error(`${WS_STAMPS_ADDON_PATH} is not built`);
    StampedReader.get(); // started
    const addon = createRequire(import.meta.url)(WS_STAMPS_ADDON_PATH) as { add(fd: number): number };
    expect(() => addon.add(-1)).toThrow(/add\(fd\): expected a socket's file descriptor/);
    expect(() => addon.add(0x7fff_fff0)).toThrow(/add\(fd\): not a socket/);
  });
});
