// The bridge's server WebSocket against the `ws` library's client and against raw TCP.
import { createServer, type Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { acceptWebSocket, type ServerWebSocket } from "../../bridges/websocket-server.ts";

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  server = undefined;
});

/** An HTTP server whose upgrades become ServerWebSockets, handed to `onSocket`. */
async function listen(onSocket: (ws: ServerWebSocket) => void, maxPayload = 1 << 20): Promise<number> {
  server = createServer((_req, res) => res.end());
  server.on("upgrade", (req, socket, head) => {
    const ws = acceptWebSocket(req, socket, head, maxPayload);
    if (ws) onSocket(ws);
  });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  return (server.address() as AddressInfo).port;
}

function opened(ws: WebSocket): Promise<void> {
  return new Promise((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
}

function closedWith(ws: WebSocket | ServerWebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) =>
    (ws as WebSocket).once("close", (code: number, reason: Buffer) =>
      resolve({ code, reason: reason.toString() }),
    ),
  );
}

describe("ServerWebSocket", () => {
  it("exchanges text and binary messages with a ws client, and answers pings", async () => {
    const port = await listen((ws) =>
      ws.on("message", (data, isBinary) => {
        if (isBinary) ws.send(new Uint8Array(Buffer.from(data).reverse()));
        else ws.send(`echo ${data.toString()}`);
      }),
    );
    const client = new WebSocket(`ws://127.0.0.1:${port}/`);
    await opened(client);
    const got: (string | number[])[] = [];
    const all = new Promise<void>((resolve) =>
      client.on("message", (data, isBinary) => {
        got.push(isBinary ? [...(data as Buffer)] : (data as Buffer).toString());
        if (got.length === 3) resolve();
      }),
    );
    client.send("héllo");
    client.send(Buffer.from([1, 2, 3]));
    client.send("x".repeat(70_000)); // a 64-bit length, over many TCP segments
    await all;
    expect(got).toEqual(["echo héllo", [3, 2, 1], `echo ${"x".repeat(70_000)}`]);
    const pong = new Promise<string>((r) => client.once("pong", (d) => r(d.toString())));
    client.ping("are you there");
    expect(await pong).toBe("are you there");
    client.close();
  });

  it("closes by the handshake when the client closes, with the client's code and reason", async () => {
    let serverClosed!: Promise<{ code: number; reason: string }>;
    const port = await listen((ws) => {
      serverClosed = closedWith(ws);
    });
    const client = new WebSocket(`ws://127.0.0.1:${port}/`);
    await opened(client);
    const clientClosed = closedWith(client);
    client.close(4000, "done here");
    expect(await serverClosed).toEqual({ code: 4000, reason: "done here" });
    expect((await clientClosed).code).toBe(4000);
  });

  it("closes by the handshake when the server closes", async () => {
    let serverClosed!: Promise<{ code: number; reason: string }>;
    const port = await listen((ws) => {
      serverClosed = closedWith(ws);
      ws.close(1000, "hang-up");
      ws.send("dropped: the socket is closing");
    });
    const client = new WebSocket(`ws://127.0.0.1:${port}/`);
    const messages: string[] = [];
    client.on("message", (d) => messages.push(String(d)));
    expect(await closedWith(client)).toEqual({ code: 1000, reason: "hang-up" });
    expect((await serverClosed).code).toBe(1000);
    expect(messages).toEqual([]);
  });

  it("closes with 1009 a message over the limit and says why", async () => {
    let error!: Promise<Error>;
    const port = await listen((ws) => {
      error = new Promise((r) => ws.once("error", r));
    }, 1000);
    const client = new WebSocket(`ws://127.0.0.1:${port}/`);
    await opened(client);
    const closed = closedWith(client);
    client.send(Buffer.alloc(1001));
    expect((await closed).code).toBe(1009);
    expect((await error).message).toMatch(/over 1000 bytes/);
  });

  it("reports 1006 when the client's socket just drops, and terminate() drops the server's", async () => {
    const closes: number[] = [];
    let serverWs!: ServerWebSocket;
    const port = await listen((ws) => {
      serverWs = ws;
      ws.on("close", (code) => closes.push(code));
    });
    const client = new WebSocket(`ws://127.0.0.1:${port}/`);
    await opened(client);
    const clientClosed = closedWith(client);
    client.terminate();
    await clientClosed;
    await expect.poll(() => closes).toEqual([1006]);
    expect(serverWs.readyState).toBe(3);

    const second = new WebSocket(`ws://127.0.0.1:${port}/`);
    await opened(second);
    const secondClosed = closedWith(second);
    serverWs.terminate();
    expect((await secondClosed).code).toBe(1006);
  });

  it("reads frames sent with the handshake, and closes 1002 on an unmasked frame (raw TCP)", async () => {
    const messages: string[] = [];
    const errors: string[] = [];
    const port = await listen((ws) => {
      ws.on("message", (d) => messages.push(d.toString()));
      ws.on("error", (err) => errors.push(err.message));
    });
    const sock = connect(port, "127.0.0.1");
    const received: Buffer[] = [];
    sock.on("data", (d: Buffer) => received.push(d));
    const ended = new Promise((r) => sock.on("close", r));
    const masked = Buffer.from([0x81, 0x82, 1, 2, 3, 4, "h".charCodeAt(0) ^ 1, "i".charCodeAt(0) ^ 2]);
    const unmasked = Buffer.from([0x81, 0x02, 0x68, 0x69]);
    sock.write(
      Buffer.concat([
        Buffer.from(
          "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
        ),
        masked,
      ]),
    );
    await expect.poll(() => messages).toEqual(["hi"]);
    sock.write(unmasked);
    await ended;
    const bytes = Buffer.concat(received);
    const text = bytes.toString("latin1");
    expect(text).toMatch(/^HTTP\/1\.1 101 .*\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK\+xOo=\r\n/s);
    const close = bytes.subarray(text.indexOf("\r\n\r\n") + 4);
    expect(close[0]).toBe(0x88);
    expect(close.readUInt16BE(2)).toBe(1002);
    expect(errors).toEqual(["WebSocket protocol error: a client frame is not masked"]);
  });

  it("answers 400 to an upgrade without a valid key", async () => {
    const port = await listen(() => {
      throw new Error("no socket expected");
    });
    const sock = connect(port, "127.0.0.1");
    let text = "";
    sock.on("data", (d) => {
      text += d.toString();
    });
    sock.write(
      "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        "Sec-WebSocket-Key: short\r\nSec-WebSocket-Version: 13\r\n\r\n",
    );
    await new Promise((r) => sock.on("close", r));
    expect(text).toMatch(/^HTTP\/1\.1 400 Bad Request \(Sec-WebSocket-Key/);
  });
});
