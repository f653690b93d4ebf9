// What the client lets queue toward a service that stops reading (a starved or SIGSTOPped
// process) is bounded: an E6 upload drops its oldest unsent audio (counted), an E5 session whose
// socket stops draining fails with SvcBackpressureError; both recover nothing they cannot keep.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it } from "vitest";
import type { WebSocket } from "ws";
import { pcm16Format } from "../../src/api/asr.ts";
import { BoundedBody, type ShedEvent } from "../../src/api/backlog.ts";
import { SvcClient } from "../../src/api/client.ts";
import { SvcBackpressureError } from "../../src/api/errors.ts";
import type { AsrRequest, TtsClientEvent } from "../../src/api/types/index.ts";
import { until } from "../helpers/until.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const c of stream) parts.push(c);
  return Buffer.concat(parts);
}

describe("BoundedBody", () => {
  it("keeps at most its bound while nothing reads: the oldest droppable chunks go, the head stays", async () => {
    const drops: number[] = [];
    const body = new BoundedBody(10, (n) => drops.push(n));
    body.write(Buffer.from("HEAD"), false);
    for (const s of ["aaaa", "bbbb", "cccc", "dddd"]) body.write(Buffer.from(s));
    expect(body.queuedBytes).toBeLessThanOrEqual(10);
    body.write(Buffer.from("!"), false);
    body.close();
    expect((await readAll(body.stream)).toString()).toBe("HEADdddd!");
    expect(drops).toEqual([4, 4, 4]);
    expect(body.queuedBytes).toBe(0);
  });

  it("hands a chunk straight to a reader that waits, so a body that keeps up drops nothing", async () => {
    const drops: number[] = [];
    const body = new BoundedBody(4, (n) => drops.push(n));
    const reader = body.stream.getReader();
    const got: string[] = [];
    for (const s of ["one!", "two!", "six!"]) {
      const next = reader.read();
      body.write(Buffer.from(s));
      got.push(Buffer.from((await next).value!).toString());
    }
    body.close();
    expect((await reader.read()).done).toBe(true);
    expect(got).toEqual(["one!", "two!", "six!"]);
    expect(drops).toEqual([]);
  });
});

/** An HTTP server that holds each request unread until `release()`. */
async function stalledServer(): Promise<{
  url: string;
  held: () => number;
  release: () => void;
  bodies: Buffer[];
  close: () => Promise<void>;
}> {
  const pending: Array<{ req: IncomingMessage; res: ServerResponse }> = [];
  const bodies: Buffer[] = [];
  let released = false;
  const serve = async (req: IncomingMessage, res: ServerResponse) => {
    const parts: Buffer[] = [];
    for await (const c of req) parts.push(c as Buffer);
    bodies.push(Buffer.concat(parts));
    res.writeHead(200, { "content-type": "text/event-stream" });
    const meta = { session_id: "asr-1", timestamp: 1 };
    res.end(`data: ${JSON.stringify({ type: "transcript.text.done", meta, text: "ok" })}\n\n`);
  };
  const server: Server = createServer((req, res) => {
    if (released) void serve(req, res);
    else {
      req.pause();
      pending.push({ req, res });
    }
  });
  const { url, close } = await listenLocal(server);
  return {
    url,
    held: () => pending.length,
    release: () => {
      released = true;
      for (const p of pending.splice(0)) void serve(p.req, p.res);
    },
    bodies,
    close,
  };
}

/** Listens on a free loopback port; `close` ends its connections too. */
async function listenLocal(server: Server): Promise<{ url: string; close: () => Promise<void> }> {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

describe("client backlog toward a service that stops reading", () => {
  let closeServer: (() => Promise<void>) | undefined;
  let tts: TestServer | undefined;
  afterEach(async () => {
    await closeServer?.();
    closeServer = undefined;
    await tts?.close();
    tts = undefined;
  });

  it("an E6 upload keeps its unsent audio under the bound, drops the oldest, and still ends well", async () => {
    const srv = await stalledServer();
    closeServer = srv.close;
    const shed: ShedEvent[] = [];
    const bound = 64 * 1024;
    const c = new SvcClient({
      baseURL: srv.url,
      apiKey: "sk",
      backlog: { asrUploadBytes: bound, onShed: (e) => shed.push(e) },
    });
    const upload = c.asr.upload(pcm16Format(16000));
    const final = upload.stream.finalText();
    await until(() => srv.held() === 1, "the request to arrive");
    // 32 MB of "speech" (far past what the loopback's socket buffers hold), 100 ms at a time.
    const piece = new Int16Array(1600);
    let written = 0;
    let maxQueued = 0;
    for (let i = 0; i < 10_000; i++) {
      piece.fill(i % 30_000);
      upload.write(piece);
      written += piece.byteLength;
      maxQueued = Math.max(maxQueued, upload.queuedBytes);
      if (i % 50 === 0) await new Promise((r) => setImmediate(r));
    }
    expect(maxQueued).toBeLessThanOrEqual(bound);
    const dropped = shed.reduce((n, e) => n + e.bytes, 0);
    expect(shed.every((e) => e.queue === "asr_upload")).toBe(true);
    expect(dropped).toBeGreaterThan(written / 2);
    srv.release();
    upload.end();
    expect(await final).toBe("ok");
    const audio = Buffer.from((JSON.parse(srv.bodies[0]!.toString()) as AsrRequest).audio.data, "base64");
    // Nothing is lost but what was counted, and the latest speech is what was kept.
    expect(audio.length + dropped).toBe(written);
    // (read as bytes: the decoded body may sit at an odd offset of Buffer's pool)
    expect(audio.readInt16LE(audio.length - piece.byteLength)).toBe(9_999 % 30_000);
  });

  it("an E6 upload that the service reads as it comes keeps none of its sent audio (no copy for a redirect)", async () => {
    // fetch tees a streamed body it may have to send again on a redirect, and the spare branch
    // holds every chunk until the answer: at 200 calls that was GBs of sent speech.
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    let received = 0;
    const server = createServer((req, res) => {
      req.on("data", (c: Buffer) => {
        received += c.length;
      });
      req.on("end", () => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        const meta = { session_id: "asr-2", timestamp: 1 };
        res.end(`data: ${JSON.stringify({ type: "transcript.text.done", meta, text: "ok" })}\n\n`);
      });
    });
    const local = await listenLocal(server);
    closeServer = local.close;
    const c = new SvcClient({ baseURL: local.url, apiKey: "sk" });
    const upload = c.asr.upload(pcm16Format(16000));
    const final = upload.stream.finalText();
    gc();
    const before = process.memoryUsage().arrayBuffers;
    const piece = new Int16Array(16_000); // 1 s of speech, a new buffer each time as a call's are
    const total = 48 * 1024 * 1024;
    let written = 0;
    while (written < total) {
      upload.write(piece.slice());
      written += piece.byteLength;
      await until(() => received >= written - 1024 * 1024, "the service to read the audio");
    }
    gc();
    const held = process.memoryUsage().arrayBuffers - before;
    upload.end();
    expect(await final).toBe("ok");
    expect(held).toBeLessThan(8 * 1024 * 1024);
  });

  it("an E5 session whose socket stops draining fails with SvcBackpressureError once past the bound", async () => {
    tts = await startServer();
    tts.onWs("/v1/realtime/audio", (ws: WebSocket) => {
      const session_id = "sess-stall";
      ws.send(JSON.stringify({ type: "tts.connection.done", data: { session_id } }));
      ws.on("message", (raw) => {
        const msg = JSON.parse(raw.toString()) as TtsClientEvent;
        if (msg.type !== "tts.create") return;
        ws.send(JSON.stringify({ type: "tts.response.created", data: { session_id } }));
        // From now on the "service" reads nothing, as a stopped process would.
        (ws as unknown as { _socket: Socket })._socket.pause();
      });
    });
    const shed: ShedEvent[] = [];
    const bound = 256 * 1024;
    const c = new SvcClient({
      baseURL: tts.url,
      apiKey: "sk",
      backlog: { ttsSendBytes: bound, onShed: (e) => shed.push(e) },
    });
    const s = await c.tts.connect({
      model: "svc-tts-2",
      voice_id: "alloy",
      response_format: "pcm",
      sample_rate: 16000,
    });
    const reading = (async () => {
      for await (const _ of s) {
        // nothing arrives
      }
    })();
    const text = "x".repeat(1000);
    let sent = 0;
    while (s.isOpen && sent < 100_000) {
      s.sendText(text);
      sent++;
      if (sent % 100 === 0) await new Promise((r) => setImmediate(r));
    }
    expect(s.state).toBe("failed");
    await expect(reading).rejects.toBeInstanceOf(SvcBackpressureError);
    expect(shed.length).toBe(1);
    expect(shed[0]!.queue).toBe("tts_send");
    expect(shed[0]!.bytes).toBeGreaterThan(bound);
    // Well short of unbounded: it stopped a little past the socket buffers and the bound.
    expect(sent).toBeLessThan(100_000);
  });
});
