// A client that closes its request while the service still reads it (the bridge drops a
// recognition upload that the caller's next words superseded, or whose call ended) is not a
// failure of the service: its log says so at debug level, not as an error.
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { API_PREFIX, PATHS } from "../../src/api/types/paths.ts";
import { type LocalService, startLocalService } from "../../src/service/index.ts";
import { until } from "../helpers/until.ts";

interface LogLine {
  level: number;
  msg: string;
  url?: string;
}

const lines: LogLine[] = [];
let dir: string;
let svc: LocalService;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "svc-abort-log-"));
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split("\n")) if (l) lines.push(JSON.parse(l) as LogLine);
      done();
    },
  });
  svc = await startLocalService({ dataDir: dir, apiKeys: ["k"], logger: pino({ level: "debug" }, sink) });
});
afterAll(async () => {
  await svc.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Sends the head and part of a chunked JSON body, then closes the connection. */
async function abortUpload(path: string): Promise<void> {
  const { port } = new URL(svc.url);
  const sock = createConnection({ host: "127.0.0.1", port: Number(port) });
  await new Promise<void>((r) => sock.once("connect", () => r()));
  const part = '{"model":"asr","audio":{"format":"pcm","data":"AAAA';
  const authenticate = vi.spyOn(svc.ctx.accounts, "authenticate");
  sock.write(
    `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer k\r\nContent-Type: application/json\r\n` +
      `Transfer-Encoding: chunked\r\n\r\n${part.length.toString(16)}\r\n${part}\r\n`,
  );
  // Closed once the service has taken the request and reads its body.
  await until(() => authenticate.mock.calls.length > 0, "the request at the service");
  authenticate.mockRestore();
  sock.destroy();
}

describe("a client closing its request mid-body", () => {
  it("is logged at debug with the request, not as a failed request", async () => {
    const path = `${API_PREFIX}${PATHS.asrSse}`;
    await abortUpload(path);
    const seen = await until(
      () => lines.find((l) => l.msg === "client closed the request before its answer"),
      "the debug line",
      5000,
    );
    expect(seen).toMatchObject({ level: 20, url: path });
    expect(lines.filter((l) => l.level >= 50)).toEqual([]);
  });
});
