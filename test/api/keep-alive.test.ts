// Streams read to their last event leave their connection for the next request; a stream dropped
// before it drops the connection (the service must see the caller go); an upload, which cannot be
// sent twice, never takes a kept-alive one. Against the real local service, its connections
// counted by a TCP relay in front of it.
import { subscribe } from "node:diagnostics_channel";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer as createHttp, type Server } from "node:http";
import { type AddressInfo, connect, createServer, type Socket, type Server as TcpServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pcm16Format } from "../../src/api/asr.ts";
import { SvcClient } from "../../src/api/client.ts";
import { type LocalService, startLocalService } from "../../src/service/index.ts";
import { until } from "../helpers/until.ts";
import { req } from "./helpers/chat-fixtures.ts";

let dir = "";
let svc: LocalService;
let relay: TcpServer;
let relayUrl = "";
/** Connections the client opened to the service, and those still open. */
const opened: Socket[] = [];
/** Connections the service has answered on: the client's next bytes on one are a reused connection's. */
const answered = new WeakSet<Socket>();
/** Set: the next request on a reused connection is cut, as a server whose idle timeout just fired. */
let cutNextReuse = false;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "keep-alive-"));
  svc = await startLocalService({ dataDir: dir, apiKeys: ["k"], chat: { paceMs: 0 } });
  const target = new URL(svc.url);
  relay = createServer((c) => {
    opened.push(c);
    const up = connect(Number(target.port), target.hostname);
    c.on("data", (d) => {
      if (cutNextReuse && answered.has(c)) {
        cutNextReuse = false;
        c.resetAndDestroy();
        return;
      }
      if (!up.write(d)) c.pause();
    });
    up.on("drain", () => c.resume());
    c.on("end", () => up.end());
    up.on("data", () => answered.add(c));
    up.pipe(c);
    c.on("error", () => up.destroy());
    up.on("error", () => c.destroy());
    c.on("close", () => up.destroy());
    up.on("close", () => c.destroy());
  });
  await new Promise<void>((r) => relay.listen(0, "127.0.0.1", r));
  relayUrl = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const s of opened) s.destroy();
  await new Promise((r) => relay.close(r));
  await svc.close();
  rmSync(dir, { recursive: true, force: true });
});

/** 'free' events of the client's sockets: a kept-alive one goes back to its agent's pool on it. */
let freed = 0;
subscribe("net.client.socket", (m) => {
  (m as { socket: Socket }).socket.on("free", () => freed++);
});

/**
 * A call, then its connection back in the pool. A turn's calls are seconds apart; the socket goes
 * back once the body's end has been read, a moment after the last event, so a call made at once
 * could still open another.
 */
async function pooled<T>(call: () => Promise<T>): Promise<T> {
  const before = freed;
  const result = await call();
  await until(() => freed > before, "the connection back in the pool", 5_000);
  return result;
}

const live = () => opened.filter((s) => !s.destroyed).length;

describe("keep-alive across streamed calls", () => {
  it("chat streams read to their last event reuse one connection", async () => {
    const c = new SvcClient({ baseURL: relayUrl, apiKey: "k", maxRetries: 0 });
    const before = opened.length;
    for (let i = 0; i < 3; i++) {
      const text = await pooled(() => c.chat.stream(req).finalContent());
      expect(text.length).toBeGreaterThan(0);
    }
    expect(opened.length - before).toBe(1);
    expect(live()).toBeGreaterThanOrEqual(1);
  });

  it("a recognition upload goes over a connection of its own, closed once its stream ends", async () => {
    const c = new SvcClient({ baseURL: relayUrl, apiKey: "k", maxRetries: 0 });
    await pooled(() => c.chat.stream(req).finalContent());
    for (let i = 0; i < 2; i++) {
      const before = opened.length;
      // The recognizer's words do not matter here, only that its stream ends: 0.3 s of silence.
      const upload = c.asr.upload(pcm16Format(16000));
      upload.write(new Int16Array(4_800));
      const result = await upload.end().finalResult();
      expect(typeof result.text).toBe("string");
      expect(opened.length - before).toBe(1);
      const own = opened.at(-1)!;
      await until(() => own.destroyed, "the upload's connection to close", 5_000);
    }
  });

  it("a chat stream dropped before its end drops its connection", async () => {
    const c = new SvcClient({ baseURL: relayUrl, apiKey: "k", maxRetries: 0 });
    await pooled(() => c.chat.stream(req).finalContent());
    const closed = () => opened.filter((s) => s.destroyed).length;
    const closedBefore = closed();
    const s = c.chat.stream({ ...req, messages: [{ role: "user", content: "tell me a long story" }] });
    for await (const _ of s) break;
    await until(() => closed() === closedBefore + 1, "the dropped stream's connection to close", 5_000);
    await c.chat.stream(req).finalContent();
  });
});

describe("a kept-alive connection the server closed as it was reused", () => {
  it("is replaced at once, outside the retry budget", async () => {
    // No retries and a backoff nobody waits out: only the immediate resend can answer this.
    const c = new SvcClient({ baseURL: relayUrl, apiKey: "k", maxRetries: 0, retryBaseMs: 600_000 });
    await pooled(() => c.chat.stream(req).finalContent());
    cutNextReuse = true;
    const text = await c.chat.stream(req).finalContent();
    expect(cutNextReuse).toBe(false);
    expect(text.length).toBeGreaterThan(0);
  });

  it("a new connection reset by the server is a failure, retried only within the budget", async () => {
    let connections = 0;
    const resetting = createServer((s) => {
      connections++;
      s.on("data", () => s.resetAndDestroy());
    });
    await new Promise<void>((r) => resetting.listen(0, "127.0.0.1", r));
    try {
      const port = (resetting.address() as AddressInfo).port;
      const c = new SvcClient({ baseURL: `http://127.0.0.1:${port}`, apiKey: "k", maxRetries: 0 });
      await expect(c.chat.stream(req).finalContent()).rejects.toThrow(/ECONNRESET|socket hang up/);
      expect(connections).toBe(1);
    } finally {
      await new Promise((r) => resetting.close(r));
    }
  });
});

describe("a body that goes on after its last event", () => {
  let server: Server;
  const sockets: Socket[] = [];
  afterAll(() => new Promise((r) => server.close(r)));

  it("loses its connection instead of keeping the client reading", async () => {
    server = createHttp((_r, res) => {
      sockets.push(res.socket!);
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write('data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[]}\n\n');
      res.write("data: [DONE]\n\n");
      // …and never ends the body.
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const c = new SvcClient({
      baseURL: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      apiKey: "k",
      maxRetries: 0,
    });
    await c.chat.stream(req).finalCompletion();
    await until(() => sockets[0]!.destroyed, "the client to drop the unfinished body", 10_000);
    expect(sockets).toHaveLength(1);
  });
});
