// Many bridges, one view, on a real PostgreSQL the test starts: two bridges in this process and a
// third as its own process. A call into one shows live in the other's console feed and GET /calls,
// marked with its instance; the database stopped mid-call loses nothing once it is back; a bridge
// killed with SIGKILL has its live call ended as `instance lost` by another that notices.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { type Bridge, startBridge } from "../../app/bridge/start.ts";
import { type ConsoleMessage, LIVE_PATH } from "../../app/console/live-events.ts";
import { exited, spawnNode, waitForLine } from "../../bench/lib/calls-procs.ts";
import { Postgres } from "../../bench/lib/postgres-server.ts";
import { loadConfig } from "../../src/config/config.ts";
import type { CallRecord } from "../../src/records/call-record.ts";
import type { CallSummary } from "../../src/records/store/call-store.ts";
import { AsteriskClient, frame, uuidFrame } from "../bridges/audiosocket/client.ts";
import { bearer, bridgeFetch } from "../helpers/bridge-token.ts";
import { freePort } from "../helpers/free-port.ts";
import { until } from "../helpers/until.ts";
import { GREETING, scripted, scriptedBridgeEnv } from "./scripted-services.ts";

const dir = mkdtempSync(join(tmpdir(), "vb-e2e-pg-"));
const TOKEN = "shared-bridge-token-0123456789";
let server: Postgres;
let url: string;
const cleanups: (() => unknown)[] = [];
beforeAll(async () => {
  server = await Postgres.start();
  url = await server.database("calls");
}, 60_000);
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const env = (instance: string): Record<string, string> => ({
  ...scriptedBridgeEnv(join(dir, instance)),
  CONSOLE_ENABLED: "true",
  DATABASE_URL: url,
  BRIDGE_INSTANCE: instance,
  BRIDGE_TOKEN: TOKEN,
  STORE_LOST_AFTER_SECONDS: "2",
});

async function bridge(instance: string): Promise<Bridge> {
  const b = await startBridge(
    loadConfig({ env: env(instance) }),
    pino({ level: process.env.E2E_LOG ?? "silent" }),
    {
      wrapServices: scripted,
    },
  );
  cleanups.push(() => b.close(0));
  return b;
}

async function call(
  b: { audioSocket?: { port: number } | undefined },
  port: number | undefined,
  uuid: string,
) {
  const client = await AsteriskClient.connect(port ?? b.audioSocket!.port);
  cleanups.push(() => client.close());
  client.send(uuidFrame(uuid));
  return client;
}

async function json<T>(b: Bridge, path: string): Promise<T> {
  return (await (await bridgeFetch(b, path)).json()) as T;
}

/** A poll for until() that counts a failed request (the database or a bridge is down) as not yet. */
function quietly<T>(poll: () => Promise<T | undefined>): () => Promise<T | undefined> {
  return () => poll().catch(() => undefined);
}

describe("bridges sharing one PostgreSQL", () => {
  let a: Bridge;
  let b: Bridge;
  beforeAll(async () => {
    [a, b] = [await bridge("bridge-a"), await bridge("bridge-b")];
  }, 60_000);

  it("show each other's live calls in the console feed and GET /calls, marked with the instance", {
    timeout: 60_000,
  }, async () => {
    const seen: ConsoleMessage[] = [];
    const feed = new WebSocket(b.url.replace(/^http/, "ws") + LIVE_PATH, { headers: bearer(b) });
    feed.on("message", (d) => seen.push(JSON.parse(d.toString()) as ConsoleMessage));
    await new Promise((r) => feed.once("open", r));
    cleanups.push(() => feed.close());

    const id = "aaaaaaaa-0000-4000-8000-000000000001";
    const client = await call(a, undefined, id);
    await until(
      () => seen.some((m) => m.type === "event" && m.callId === id && m.event.type === "assistant"),
      "A's greeting in B's feed",
      20_000,
    );
    const start = seen.find((m) => m.type === "event" && m.callId === id);
    expect(start).toMatchObject({
      type: "event",
      instance: "bridge-a",
      event: { type: "call-start", transport: "audiosocket" },
    });
    const live = await json<{ calls: CallSummary[] }>(b, "/calls?outcome=live");
    expect(live.calls.map((c) => [c.callId, c.instance])).toEqual([[id, "bridge-a"]]);
    // A console of B opened now gets A's call among the live ones.
    const late = new WebSocket(b.url.replace(/^http/, "ws") + LIVE_PATH, { headers: bearer(b) });
    const hello = await new Promise<ConsoleMessage>((r) =>
      late.once("message", (d) => r(JSON.parse(d.toString()))),
    );
    late.close();
    expect(hello.type === "hello" && hello.calls.map((c) => [c.callId, c.instance])).toEqual([
      [id, "bridge-a"],
    ]);

    client.send(frame(0x00));
    await until(
      () => seen.some((m) => m.type === "event" && m.callId === id && m.event.type === "call-end"),
      "the end in B's feed",
    );
    const record = await until(
      quietly(async () => {
        const r = await json<CallRecord & { instance: string }>(b, `/calls/${id}`);
        return r.endReason ? r : undefined;
      }),
      "the ended record from B",
    );
    expect(record).toMatchObject({ instance: "bridge-a", endReason: "hang-up from Asterisk" });
    expect(record.turns[0]).toMatchObject({ role: "assistant", generated: GREETING });
  });

  it("keep calls going while the database is down, say so, and write everything once it is back", {
    timeout: 90_000,
  }, async () => {
    const during = "aaaaaaaa-0000-4000-8000-000000000002";
    const whole = "aaaaaaaa-0000-4000-8000-000000000003";
    const first = await call(a, undefined, during);
    await until(() => a.transcripts.get(during)?.turns.length === 1, "the greeting");
    await a.store.flush();
    await server.stop();
    try {
      // A whole call while the database is down, and the end of the one that began before.
      const second = await call(a, undefined, whole);
      await until(() => a.transcripts.get(whole)?.turns.length === 1, "the greeting with the database down");
      second.send(frame(0x00));
      first.send(frame(0x00));
      await until(() => a.transcripts.liveCalls.length === 0, "both calls ended");
      const ready = await until(
        quietly(async () => {
          const r = (await (await fetch(`${a.url}/readyz`)).json()) as {
            status: string;
            store: { trouble?: string };
          };
          return r.store.trouble ? r : undefined;
        }),
        "/readyz to say the database is down",
      );
      expect(ready.status).toBe("ready");
      expect(ready.store.trouble).toMatch(/^PostgreSQL unreachable since .*writes waiting$/);
      expect((await bridgeFetch(b, "/calls")).status).toBe(503);
    } finally {
      await server.start();
    }
    for (const id of [during, whole]) {
      const record = await until(
        quietly(async () => {
          const r = await json<CallRecord>(b, `/calls/${id}`);
          return r.endReason ? r : undefined;
        }),
        `${id} written once the database is back`,
        30_000,
      );
      expect(record.events.map((e) => e.type)).toEqual(["call-start", "assistant", "call-end"]);
    }
    await until(
      quietly(async () => {
        const r = (await (await fetch(`${a.url}/readyz`)).json()) as { store: { trouble?: string } };
        return r.store.trouble === undefined ? true : undefined;
      }),
      "/readyz to clear",
    );
  });

  it("end the live call of a bridge killed with SIGKILL as `instance lost`", {
    timeout: 90_000,
  }, async () => {
    const port = await freePort();
    const log = join(dir, "bridge-c.log");
    const child = spawnNode(
      ["app/cli.ts", "start"],
      { ...process.env, ...env("bridge-c"), AUDIOSOCKET_PORT: String(port), LOG_FORMAT: "json" },
      log,
    );
    cleanups.push(() => child.kill("SIGKILL"));
    await waitForLine(log, /"ready: how to reach the agent"/, 60_000, child);
    const id = "cccccccc-0000-4000-8000-000000000001";
    await call({}, port, id);
    await until(
      quietly(async () => {
        const r = await json<{ calls: CallSummary[] }>(b, "/calls?outcome=live");
        return r.calls.some((c) => c.callId === id && c.instance === "bridge-c") ? true : undefined;
      }),
      "C's call live in B's list",
    );
    child.kill("SIGKILL");
    await exited(child, 10_000);
    const record = await until(
      quietly(async () => {
        const r = await json<CallRecord>(b, `/calls/${id}`);
        return r.endReason ? r : undefined;
      }),
      "the call ended by another bridge",
      30_000,
    );
    expect(record.endReason).toBe("instance lost");
    expect(
      (await json<{ calls: CallSummary[] }>(b, `/calls?outcome=instance_lost`)).calls.map((c) => c.callId),
    ).toEqual([id]);
  });
});
