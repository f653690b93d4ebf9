// The client's wire (node's HTTP client, not fetch): what fetch used to do for it and now must be
// done here — HTTPS with the process's trusted CAs, multipart bodies, redirects refused rather
// than followed, keep-alive sockets reused.
import { createServer as createHttps } from "node:https";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { SvcClient } from "../../src/api/client.ts";
import { SvcConnectionError, SvcHttpError } from "../../src/api/errors.ts";
import {
  makeSelfSignedCert,
  removeCert,
  type SelfSignedCert,
  trustInThisProcess,
} from "../helpers/tls-cert.ts";
import { completion, req } from "./helpers/chat-fixtures.ts";
import { sendJson, startServer, type TestServer } from "./helpers/server.ts";

let srv: TestServer | undefined;
let cert: SelfSignedCert | undefined;
let closeHttps: (() => Promise<void>) | undefined;
afterEach(async () => {
  await srv?.close();
  await closeHttps?.();
  if (cert) removeCert(cert);
  srv = cert = closeHttps = undefined;
});

describe("the client's wire", () => {
  it("speaks HTTPS, refusing a certificate the process does not trust and accepting it once trusted", async () => {
    cert = makeSelfSignedCert();
    const ports: number[] = [];
    const server = createHttps({ cert: cert.cert, key: cert.key }, (r, res) => {
      ports.push(r.socket.remotePort ?? 0);
      r.resume();
      r.on("end", () => sendJson(res, 200, completion));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closeHttps = () => new Promise((resolve) => server.close(() => resolve()));
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const c = new SvcClient({ baseURL: url, apiKey: "sk-test", maxRetries: 0 });

    const refused = await c.chat.create(req).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SvcConnectionError);
    expect((refused as Error).message).toMatch(/self-signed certificate|DEPTH_ZERO_SELF_SIGNED_CERT/);

    trustInThisProcess(cert.cert);
    expect(await c.chat.create(req)).toEqual(completion);
    expect(await c.chat.create(req)).toEqual(completion);
    // The second request went over the first one's socket (keep-alive).
    expect(ports).toHaveLength(2);
    expect(ports[1]).toBe(ports[0]);
    server.closeAllConnections();
  });

  it("sends a multipart body with its boundary", async () => {
    srv = await startServer();
    srv.on("POST /v1/files", (r, res) => {
      const type = String(r.headers["content-type"]);
      const boundary = /boundary=(.+)$/.exec(type)?.[1];
      const text = r.body.toString("latin1");
      const ok =
        type.startsWith("multipart/form-data") && boundary !== undefined && text.includes(`--${boundary}--`);
      sendJson(res, ok ? 200 : 400, {
        id: "file-1",
        object: "file",
        bytes: 5,
        created_at: 1,
        filename: "a.txt",
        purpose: "assistants",
      });
    });
    const c = new SvcClient({ baseURL: srv.url, apiKey: "sk-test" });
    const file = await c.files.upload({ data: new TextEncoder().encode("hello"), filename: "a.txt" });
    expect(file.id).toBe("file-1");
    const sent = srv.requests[0]!;
    expect(sent.body.toString("latin1")).toContain('filename="a.txt"');
    expect(sent.body.toString("latin1")).toContain("hello");
  });

  it("does not follow a redirect: the answer is an error that names its status", async () => {
    srv = await startServer();
    srv.on("POST /v1/chat/completions", (_r, res) => {
      res.writeHead(307, { location: "http://127.0.0.1:9/elsewhere" });
      res.end();
    });
    const c = new SvcClient({ baseURL: srv.url, apiKey: "sk-test", maxRetries: 0 });
    const err = await c.chat.create(req).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SvcHttpError);
    expect((err as SvcHttpError).status).toBe(307);
    expect(srv.requests).toHaveLength(1);
  });
});
