import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SvcClient } from "../../src/api/client.ts";
import {
  AuthenticationError,
  BadRequestError,
  RateLimitError,
  SvcAbortError,
  SvcConnectionError,
  SvcServerError,
  SvcStreamCutError,
  SvcTimeoutError,
} from "../../src/api/errors.ts";
import { backoffMs, retryAfterMs, type SvcLogger } from "../../src/api/http.ts";
import { completion, req } from "./helpers/chat-fixtures.ts";
import {
  bytesThrough,
  type SseFrame,
  sendHtml,
  sendJson,
  sendSse,
  startServer,
  type TestServer,
} from "./helpers/server.ts";

const path = "POST /v1/chat/completions";

let srv: TestServer;
beforeEach(async () => {
  srv = await startServer();
});
afterEach(async () => {
  await srv.close();
});

function client(extra: Partial<ConstructorParameters<typeof SvcClient>[0]> = {}): SvcClient {
  return new SvcClient({ baseURL: srv.url, apiKey: "sk-test", retryBaseMs: 1, retryMaxMs: 5, ...extra });
}

/** Captures what the client logs, through a real pino logger. */
function capturingLogger(): { logger: SvcLogger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: "debug" }, { write: (s: string) => lines.push(JSON.parse(s)) });
  return { logger, lines };
}

describe("request core", () => {
  it("sends the bearer key and JSON body, and strips a trailing /v1 from the base URL", async () => {
    srv.on(path, (_r, res) => sendJson(res, 200, completion));
    const c = new SvcClient({ baseURL: `${srv.url}/v1/`, apiKey: "sk-test" });
    expect(await c.chat.create(req)).toEqual(completion);
    const r = srv.requests[0]!;
    expect(r.headers.authorization).toBe("Bearer sk-test");
    expect(r.headers["content-type"]).toBe("application/json");
    expect(r.json).toEqual({ ...req, stream: false });
  });

  it("takes base URL and key from SVC_BASE_URL / SVC_API_KEY", async () => {
    srv.on(path, (_r, res) => sendJson(res, 200, completion));
    const saved = { b: process.env.SVC_BASE_URL, k: process.env.SVC_API_KEY };
    process.env.SVC_BASE_URL = srv.url;
    process.env.SVC_API_KEY = "sk-env";
    try {
      await new SvcClient().chat.create(req);
    } finally {
      process.env.SVC_BASE_URL = saved.b;
      process.env.SVC_API_KEY = saved.k;
      if (saved.b === undefined) delete process.env.SVC_BASE_URL;
      if (saved.k === undefined) delete process.env.SVC_API_KEY;
    }
    expect(srv.requests[0]!.headers.authorization).toBe("Bearer sk-env");
  });

  it("turns a 4xx JSON error body into a typed error, without retrying", async () => {
    srv.on(path, (_r, res) =>
      sendJson(res, 400, {
        error: { message: "bad temperature", type: "invalid_request_error", param: "temperature" },
      }),
    );
    const err = await client()
      .chat.create(req)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err).toMatchObject({
      status: 400,
      type: "invalid_request_error",
      param: "temperature",
      requestId: "req_test",
      message: "HTTP 400: bad temperature",
    });
    expect(srv.requests).toHaveLength(1);
  });

  it("maps 401 to AuthenticationError", async () => {
    srv.on(path, (_r, res) =>
      sendJson(res, 401, { error: { message: "no key", type: "authentication_error" } }),
    );
    await expect(client().chat.create(req)).rejects.toBeInstanceOf(AuthenticationError);
  });

  it("retries a 5xx with an HTML body, then raises a server error naming the page", async () => {
    srv.on(path, (_r, res) => sendHtml(res, 502));
    const err = await client({ maxRetries: 2 })
      .chat.create(req)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SvcServerError);
    expect((err as SvcServerError).status).toBe(502);
    expect((err as SvcServerError).message).toBe("HTTP 502: 502 Bad Gateway");
    expect((err as SvcServerError).body).toContain("<html>");
    expect(srv.requests).toHaveLength(3);
  });

  it("retries 503 then succeeds, waiting what retry-after asks", async () => {
    srv.on(
      path,
      (_r, res) => sendHtml(res, 503, { "retry-after": "0" }),
      (_r, res) =>
        sendJson(
          res,
          429,
          { error: { message: "slow down", type: "rate_limit_error" } },
          { "retry-after-ms": "7" },
        ),
      (_r, res) => sendJson(res, 200, completion),
    );
    const { logger, lines } = capturingLogger();
    // A huge backoff base: only retry-after can make these retries short.
    const c = client({ logger, retryBaseMs: 600_000, retryMaxMs: 600_000 });
    expect(await c.chat.create(req)).toEqual(completion);
    expect(srv.requests).toHaveLength(3);
    const retries = lines.filter((l) => l.msg === "svc request failed, retrying");
    expect(retries.map((l) => [l.status, l.retryInMs])).toEqual([
      [503, 0],
      [429, 7],
    ]);
  });

  it("does not wait for a retry-after beyond a minute", async () => {
    srv.on(path, (_r, res) =>
      sendJson(
        res,
        429,
        { error: { message: "quota", type: "rate_limit_error" } },
        { "retry-after": "3600" },
      ),
    );
    await expect(client().chat.create(req)).rejects.toBeInstanceOf(RateLimitError);
    expect(srv.requests).toHaveLength(1);
  });

  it("retries connection errors and then reports them", async () => {
    const dead = await startServer();
    const url = dead.url;
    await dead.close();
    const c = new SvcClient({ baseURL: url, apiKey: "k", maxRetries: 1, retryBaseMs: 1 });
    const err = await c.chat.create(req).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SvcConnectionError);
    expect((err as Error).message).toMatch(/ECONNREFUSED/);
  });

  it("times out a call that gets no answer", async () => {
    srv.on(path, () => {
      /* never answers */
    });
    const err = await client({ timeoutMs: 150, maxRetries: 0 })
      .chat.create(req)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SvcTimeoutError);
  });

  it("aborts a pending call through the caller's signal, without retrying", async () => {
    let arrived!: () => void;
    const arrival = new Promise<void>((r) => {
      arrived = r;
    });
    srv.on(path, () => arrived());
    const ac = new AbortController();
    const p = client({ maxRetries: 3 }).chat.create(req, { signal: ac.signal });
    await arrival;
    ac.abort();
    await expect(p).rejects.toBeInstanceOf(SvcAbortError);
    expect(srv.requests).toHaveLength(1);
  });

  it("never retries once a streamed body has begun", async () => {
    const frames: SseFrame[] = [
      {
        data: {
          id: "c",
          object: "chat.completion.chunk",
          created: 1,
          model: "m",
          choices: [{ index: 0, delta: { content: "Hel" }, finish_reason: "" }],
        },
      },
      {
        data: {
          id: "c",
          object: "chat.completion.chunk",
          created: 1,
          model: "m",
          choices: [{ index: 0, delta: { content: "lo" }, finish_reason: "" }],
        },
      },
    ];
    srv.on(path, (_r, res) => sendSse(res, frames, { cutAfterBytes: bytesThrough(frames, 1, 25) }));
    const s = client({ maxRetries: 3 }).chat.stream(req);
    const got: string[] = [];
    const err = await (async () => {
      for await (const d of s.textDeltas()) got.push(d);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SvcStreamCutError);
    expect(got).toEqual(["Hel"]);
    expect(srv.requests).toHaveLength(1);
  });
});

describe("streams", () => {
  const frames: SseFrame[] = [
    {
      data: {
        id: "c",
        object: "chat.completion.chunk",
        created: 1,
        model: "m",
        choices: [{ index: 0, delta: { content: "ok" }, finish_reason: "stop" }],
      },
    },
    { data: "[DONE]" },
  ];

  it("retries a stream's request until its body begins", async () => {
    srv.on(
      path,
      (_r, res) => sendHtml(res, 503),
      (_r, res) => sendSse(res, frames),
    );
    expect(await client().chat.stream(req).finalContent()).toBe("ok");
    expect(srv.requests).toHaveLength(2);
  });

  it("does not count the time before the caller starts reading", async () => {
    srv.on(path, (_r, res) => sendSse(res, frames));
    const s = client({ timeoutMs: 100, maxRetries: 0 }).chat.stream(req);
    // The answer arrives and waits unread for three times the timeout: a quiet window, not a wait on
    // a condition, as what is checked is that the timeout does not fire in it.
    await new Promise((r) => setTimeout(r, 300));
    expect(await s.finalContent()).toBe("ok");
  });

  it("times out a stream that stalls between chunks", async () => {
    srv.on(path, (_r, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(`data: ${JSON.stringify(frames[0]!.data)}\n\n`);
      // then silence
    });
    const s = client({ timeoutMs: 200, maxRetries: 0 }).chat.stream(req);
    const it = s.textDeltas();
    expect((await it.next()).value).toBe("ok");
    await expect(it.next()).rejects.toBeInstanceOf(SvcTimeoutError);
  });
});

describe("retry helpers", () => {
  it("reads retry-after in seconds, milliseconds and as an HTTP date", () => {
    expect(retryAfterMs(new Headers({ "retry-after": "2" }))).toBe(2000);
    expect(retryAfterMs(new Headers({ "retry-after-ms": "150", "retry-after": "9" }))).toBe(150);
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterMs(new Headers({ "retry-after": "Thu, 01 Jan 2026 00:00:05 GMT" }), now)).toBe(5000);
    expect(retryAfterMs(new Headers())).toBeUndefined();
  });

  it("backs off exponentially with up to 25 % jitter, capped", () => {
    expect(backoffMs(0, 100, 1000, () => 0)).toBe(100);
    expect(backoffMs(3, 100, 1000, () => 0)).toBe(800);
    expect(backoffMs(3, 100, 1000, () => 1)).toBe(600);
    expect(backoffMs(9, 100, 1000, () => 0)).toBe(1000);
  });
});
