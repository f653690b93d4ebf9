// A streamed answer (SSE) keeps the connection the way the client asked. The bridge's E6 uploads
// say `Connection: close`; the service used to answer `Connection: keep-alive` anyway, which left
// a socket whose parser refuses anything more: a proxy in front of the service (as a hosted one
// has) reused it and got a 400 for its next request, and the bridge sent its chat twice.
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AsrRequest } from "../../src/api/types/asr.ts";
import { API_PREFIX, PATHS } from "../../src/api/types/paths.ts";
import { type LocalService, startLocalService } from "../../src/service/index.ts";

let dir: string;
let svc: LocalService;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "svc-sse-conn-"));
  svc = await startLocalService({ dataDir: dir, apiKeys: ["k"] });
});
afterAll(async () => {
  await svc.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A quarter second of silence as an E6 body. */
function asrBody(): string {
  const body: AsrRequest = {
    audio: {
      data: Buffer.alloc(8000).toString("base64"),
      input: { format: { type: "pcm", codec: "pcm_s16le", rate: 16000, bits: 16, channel: 1 } },
    },
  };
  return JSON.stringify(body);
}

function request(path: string, body: string, connection: "close" | undefined): string {
  return (
    `POST ${API_PREFIX}${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\n` +
    `Content-Type: application/json\r\nAccept: text/event-stream\r\n` +
    `${connection ? `Connection: ${connection}\r\n` : ""}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

/** Everything the socket receives until the server ends it, or until `enough` says stop. */
function read(sock: Socket, enough: (text: string) => boolean = () => false): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    const done = () => {
      sock.off("data", onData);
      resolve(text);
    };
    const onData = (b: Buffer) => {
      text += b.toString("utf8");
      if (enough(text)) done();
    };
    sock.on("data", onData);
    sock.once("end", done);
    sock.once("error", reject);
  });
}

async function connect(): Promise<Socket> {
  const { port } = new URL(svc.url);
  const sock = createConnection({ host: "127.0.0.1", port: Number(port) });
  await new Promise<void>((r) => sock.once("connect", () => r()));
  return sock;
}

const headOf = (text: string) => text.slice(0, text.indexOf("\r\n\r\n")).toLowerCase();
const transcriptDone = (text: string) => text.includes("transcript.text.done");

describe("E6's streamed answer and the connection", () => {
  it("closes the connection when the request said Connection: close", async () => {
    const sock = await connect();
    sock.write(request(PATHS.asrSse, asrBody(), "close"));
    const ended = new Promise<void>((r) => sock.once("end", () => r()));
    const text = await read(sock, transcriptDone);
    expect(headOf(text)).toMatch(/^http\/1\.1 200/);
    expect(headOf(text)).not.toContain("keep-alive");
    await ended; // the server ends the connection once the answer is complete
    sock.destroy();
  });

  it("takes a second request on a kept-alive connection after a streamed answer", async () => {
    const sock = await connect();
    sock.write(request(PATHS.asrSse, asrBody(), undefined));
    const first = await read(sock, transcriptDone);
    expect(headOf(first)).toMatch(/^http\/1\.1 200/);
    sock.write(request(PATHS.asrSse, asrBody(), undefined));
    const second = await read(sock, transcriptDone);
    expect(headOf(second)).toMatch(/^http\/1\.1 200/);
    sock.destroy();
  });
});
