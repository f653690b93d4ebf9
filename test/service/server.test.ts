// The server core: bearer auth on every request, one JSON error shape, WebSocket routing with
// the same auth before the upgrade, and the dev key kept in the data dir.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { WebSocket } from "ws";
import type { ErrorBody } from "../../src/api/types/index.ts";
import { DEV_KEY_FILE } from "../../src/service/auth.ts";
import { badParam } from "../../src/service/errors.ts";
import { type LocalService, startLocalService } from "../../src/service/index.ts";
import { until } from "../helpers/until.ts";

let dir: string;
let svc: LocalService;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "svc-server-"));
  svc = await startLocalService({ dataDir: dir, apiKeys: ["key-a", "key-b"] });
  svc.ctx.ws.route("/v1/test/echo", {
    verify: ({ url }) => {
      if (url.searchParams.get("model") !== "m") throw badParam("model", "must be m");
    },
    handle: (ws, { account }) => ws.send(account),
  });
});
afterAll(async () => {
  await svc.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("auth and errors", () => {
  it("refuses a request without a key, with a JSON error body", async () => {
    const res = await fetch(`${svc.url}/v1/files`);
    expect(res.status).toBe(401);
    const body = (await res.json()) as ErrorBody;
    expect(body.error.type).toBe("authentication_error");
    expect(body.error.message).toMatch(/Authorization/);
  });

  it("refuses a wrong key and a malformed header", async () => {
    for (const authorization of ["Bearer nope", "Basic a2V5LWE=", "key-a"]) {
      const res = await fetch(`${svc.url}/v1/files`, { headers: { authorization } });
      expect(res.status).toBe(401);
    }
  });

  it("answers an unknown path with 404 in the same shape once authenticated", async () => {
    const res = await fetch(`${svc.url}/v1/nothing-here`, { headers: { authorization: "Bearer key-a" } });
    expect(res.status).toBe(404);
    const body = await res.json();
    expect(body).toEqual({
      error: {
        message: "no endpoint GET /v1/nothing-here",
        type: "not_found_error",
        param: null,
        code: "not_found",
      },
    });
  });
});

describe("bodies", () => {
  it("refuses a JSON body over the limit with 413, and a non-JSON content type with 400", async () => {
    const big = JSON.stringify({ purpose: "storage", url: "x".repeat(2 * 1024 * 1024) });
    const res = await fetch(`${svc.url}/v1/files`, {
      method: "POST",
      headers: { authorization: "Bearer key-a", "content-type": "application/json" },
      body: big,
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as ErrorBody).error.message).toMatch(/too large/);
    const text = await fetch(`${svc.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer key-a", "content-type": "text/plain" },
      body: "hello",
    });
    expect(text.status).toBe(400);
    expect(((await text.json()) as ErrorBody).error.message).toMatch(/application\/json/);
  });
});

describe("WebSocket routing", () => {
  function connect(path: string, key?: string): Promise<{ status?: number; body?: string; msg?: string }> {
    return new Promise((resolve) => {
      const ws = new WebSocket(`${svc.url.replace("http", "ws")}${path}`, {
        headers: key ? { authorization: `Bearer ${key}` } : {},
      });
      ws.on("message", (data) => {
        resolve({ msg: data.toString() });
        ws.close();
      });
      ws.on("unexpected-response", (_req, res) => {
        let body = "";
        res.on("data", (c: Buffer) => {
          body += c;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      ws.on("error", () => {});
    });
  }

  it("upgrades an authenticated, verified request and passes the account", async () => {
    const r = await connect("/v1/test/echo?model=m", "key-b");
    expect(r.msg).toMatch(/^acct_[0-9a-f]{24}$/);
    const other = await connect("/v1/test/echo?model=m", "key-a");
    expect(other.msg).not.toBe(r.msg);
  });

  it("refuses before the upgrade: no key 401, failed verify 400, unknown path 404", async () => {
    expect((await connect("/v1/test/echo?model=m")).status).toBe(401);
    const bad = await connect("/v1/test/echo?model=x", "key-a");
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body!).error.param).toBe("model");
    expect((await connect("/v1/test/none", "key-a")).status).toBe(404);
  });
});

describe("dev key", () => {
  it("makes one key when none is configured, keeps it in the data dir and reuses it", async () => {
    const d = mkdtempSync(join(tmpdir(), "svc-devkey-"));
    try {
      const a = await startLocalService({ dataDir: d });
      await a.close();
      expect(a.devKey).toBe(true);
      expect(readFileSync(join(d, DEV_KEY_FILE), "utf8").trim()).toBe(a.apiKeys[0]);
      const b = await startLocalService({ dataDir: d });
      const res = await fetch(`${b.url}/v1/x`, { headers: { authorization: `Bearer ${a.apiKeys[0]}` } });
      await b.close();
      expect(b.apiKeys).toEqual(a.apiKeys);
      expect(res.status).toBe(404);
    } finally {
      rmSync(d, { recursive: true, force: true });
    }
  });
});

describe("closing", () => {
  it("does not wait for a connection no request came on (a client's pooled socket), and still finishes one that did", async () => {
    const own = await startLocalService({ dataDir: mkdtempSync(join(dir, "closing-")), apiKeys: ["key-c"] });
    const { hostname, port } = new URL(own.url);
    // A connection a client opened for a request it then gave up before sending: it never ends by itself.
    const idle = createConnection({ host: hostname, port: Number(port) });
    await new Promise((r) => idle.once("connect", r));
    const dropped = new Promise((r) => idle.once("close", r));
    // A request under way on another connection is answered before the server closes.
    const authenticate = vi.spyOn(own.ctx.accounts, "authenticate");
    const busy = fetch(`${own.url}/v1/files`, { headers: { authorization: "Bearer key-c" } });
    await until(() => authenticate.mock.calls.length > 0, "the request at the service");
    const closing = own.close().then(() => "closed");
    const result = await Promise.race([
      closing,
      new Promise((r) => setTimeout(() => r("still closing after 10 s"), 10_000)),
    ]);
    expect(result).toBe("closed");
    await dropped;
    expect((await busy).status).toBe(200);
  }, 20_000);

  it("cuts a request that never finishes once the grace is over, rather than wait on it", async () => {
    const own = await startLocalService({
      dataDir: mkdtempSync(join(dir, "grace-")),
      apiKeys: ["key-d"],
      closeGraceMs: 300,
    });
    const { hostname, port } = new URL(own.url);
    // A request whose body never comes: Node's server.close() alone waits on it for its request
    // timeout (300 s).
    const stuck = createConnection({ host: hostname, port: Number(port) });
    await new Promise((r) => stuck.once("connect", r));
    const cut = new Promise((r) => stuck.once("close", r));
    const authenticate = vi.spyOn(own.ctx.accounts, "authenticate");
    stuck.write(
      "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer key-d\r\n" +
        "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
    );
    await until(() => authenticate.mock.calls.length > 0, "the request at the service");
    const result = await Promise.race([
      own.close().then(() => "closed"),
      new Promise((r) => setTimeout(() => r("still closing after 10 s"), 10_000)),
    ]);
    expect(result).toBe("closed");
    await cut;
  }, 20_000);
});
