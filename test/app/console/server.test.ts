// The console's server side with the real bridge and the real local service, over real sockets:
// the page and its files, a browser call placed by a program speaking the page's protocol
// (bridges/browser/protocol.ts) while another socket reads the live feed (src/console/live-events.ts),
// the call's record and recording, and the bridge's token.
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { type Bridge, startBridge } from "../../../app/bridge/start.ts";
import { type ConsoleMessage, LIVE_PATH } from "../../../app/console/live-events.ts";
import {
  BROWSER_CALL_PATH,
  BROWSER_RATE,
  type BrowserClientMessage,
  type BrowserServerMessage,
} from "../../../bridges/browser/protocol.ts";
import { loadConfig } from "../../../src/config/config.ts";
import type { CallRecord } from "../../../src/records/call-record.ts";
import { bearer, bridgeFetch } from "../../helpers/bridge-token.ts";
import { until } from "../../helpers/until.ts";

const GREETING = "Thanks for calling Acme Bikes. How can I help you?";
const TOKEN = "console-test-token-0123456789";

async function start(
  env: Record<string, string>,
  dir = mkdtempSync(join(tmpdir(), "vb-console-")),
  lines: string[] = [],
): Promise<{ bridge: Bridge; dir: string }> {
  const config = loadConfig({
    env: { HOST: "127.0.0.1", PORT: "0", SIP_PORT: "off", SVC_LOCAL_DATA_DIR: dir, ...env },
  });
  const log = pino({ level: process.env.E2E_LOG ?? "info" }, { write: (line: string) => lines.push(line) });
  return { bridge: await startBridge(config, log), dir };
}

const wsUrl = (bridge: Bridge, path: string) => bridge.url.replace(/^http/, "ws") + path;

/** Every text message of a socket, parsed from the first one on, and a way to wait for one that matches. */
interface Inbox<T> {
  seen: T[];
  next(test: (m: T) => boolean): Promise<T>;
}

function inbox<T>(ws: WebSocket): Inbox<T> {
  const seen: T[] = [];
  const waiters: { test: (m: T) => boolean; resolve: (m: T) => void }[] = [];
  ws.on("message", (data, isBinary) => {
    if (isBinary) return;
    const m = JSON.parse(data.toString()) as T;
    seen.push(m);
    for (const w of [...waiters])
      if (w.test(m)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
  });
  return {
    seen,
    next(test) {
      const hit = seen.find(test);
      return hit ? Promise.resolve(hit) : new Promise((resolve) => waiters.push({ test, resolve }));
    },
  };
}

/**
 * Opens a socket, its inbox listening before the first message can arrive (it may come in the
 * same packet as the upgrade's answer); rejects with the HTTP status of a refused upgrade.
 */
function open<T>(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ ws: WebSocket; inbox: Inbox<T> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    const box = inbox<T>(ws);
    ws.once("open", () => resolve({ ws, inbox: box }));
    ws.once("unexpected-response", (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.once("error", reject);
  });
}

describe("the console, served by the bridge", () => {
  let bridge: Bridge;
  let dir: string;
  beforeAll(async () => {
    ({ bridge, dir } = await start({ AGENT_RECORDING_DIR: join(tmpdir(), `vb-console-rec-${process.pid}`) }));
  });
  afterAll(async () => {
    await bridge.close(0);
    rmSync(dir, { recursive: true, force: true });
    rmSync(join(tmpdir(), `vb-console-rec-${process.pid}`), { recursive: true, force: true });
  });

  it("serves the page at / with every file it names, and loads nothing from elsewhere", async () => {
    const res = await bridgeFetch(bridge, "/");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("content-security-policy")).toContain("default-src 'self'");
    const html = await res.text();
    const files = [...html.matchAll(/(?:src|href)="(\/console\/[^"]+)"/g)].map((m) => m[1]!);
    expect(files).toEqual(expect.arrayContaining(["/console/app.js", "/console/console.css"]));
    // The modules the page imports, and the worklet it loads, are there too.
    const app = readFileSync(new URL("../../../console/app.js", import.meta.url), "utf8");
    const imports = [...app.matchAll(/from "\.\/([\w-]+\.js)"/g)].map((m) => `/console/${m[1]}`);
    for (const file of [...files, ...imports, "/console/call-worklet.js", "/console/phone.js"]) {
      const r = await bridgeFetch(bridge, file);
      expect(r.status, file).toBe(200);
    }
    const missing = await bridgeFetch(bridge, "/console/nope.js");
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { message: string } }).error.message).toBe(
      "no console file nope.js",
    );
    expect(bridge.entrances.console).toBe(`${bridge.url}/?token=${bridge.token}`);
  });

  it("takes a browser call, shows it on the live feed as it happens, and keeps its record and recording", async () => {
    const { ws: feed, inbox: live } = await open<ConsoleMessage>(wsUrl(bridge, LIVE_PATH), bearer(bridge));
    expect(await live.next((m) => m.type === "hello")).toEqual({ type: "hello", calls: [] });

    const { ws: call, inbox: said } = await open<BrowserServerMessage>(
      wsUrl(bridge, BROWSER_CALL_PATH),
      bearer(bridge),
    );
    const send = (m: BrowserClientMessage) => call.send(JSON.stringify(m));
    const ready = await said.next((m) => m.type === "ready");
    expect(ready).toMatchObject({ sampleRate: BROWSER_RATE, frameMs: 20 });
    const callId = (ready as Extract<BrowserServerMessage, { type: "ready" }>).callId;

    // Act as the page: the microphone sends silence every 20 ms; received audio "plays" in real
    // time from its arrival, and what has played is reported as the page does.
    let receivedMs = 0;
    let firstAudioAt = 0;
    call.on("message", (data, isBinary) => {
      if (!isBinary) return;
      firstAudioAt ||= Date.now();
      receivedMs += (data as Buffer).length / 2 / (BROWSER_RATE / 1000);
    });
    const mic = setInterval(() => call.send(new Uint8Array(640)), 20);
    const report = setInterval(() => {
      if (firstAudioAt)
        send({ type: "played", epoch: 0, ms: Math.min(receivedMs, Date.now() - firstAudioAt) });
    }, 100);
    try {
      // Broken messages are refused with the field and the reason, and the call goes on.
      call.send(JSON.stringify({ type: "played", epoch: -1, ms: 0 }));
      expect(await said.next((m) => m.type === "error")).toEqual({
        type: "error",
        message: "played.epoch: expected a whole number ≥ 0, got -1",
      });
      call.send(new Uint8Array(3));
      const odd = await said.next((m) => m.type === "error" && m.message.startsWith("audio"));
      expect(odd).toMatchObject({
        message: "audio: binary messages are 16-bit samples, got an odd number of bytes (3)",
      });

      // The feed shows the call start, the greeting forming word by word with its audio going out,
      // then the greeting as the record has it, heard to the end (the page reported playing it all).
      const started = await live.next((m) => m.type === "event" && m.event.type === "call-start");
      expect(started).toMatchObject({ callId, event: { transport: "browser", from: "browser 127.0.0.1" } });
      await live.next(
        (m) => m.type === "activity" && m.activity.kind === "agent-text" && m.activity.text === GREETING,
      );
      await live.next(
        (m) => m.type === "activity" && m.activity.kind === "agent-audio" && m.activity.state === "playing",
      );
      const greeting = await live.next((m) => m.type === "event" && m.event.type === "assistant");
      expect(greeting).toMatchObject({
        callId,
        event: { heard: GREETING, generated: GREETING, interrupted: false },
      });
      // A page connecting now gets the live call with its record so far.
      const late = await open<ConsoleMessage>(wsUrl(bridge, LIVE_PATH), bearer(bridge));
      const hello = await late.inbox.next((m) => m.type === "hello");
      late.ws.close();
      expect(
        hello.type === "hello" && hello.calls.map((c) => [c.callId, c.events.map((e) => e.type)]),
      ).toEqual([[callId, ["call-start", "assistant"]]]);
    } finally {
      clearInterval(mic);
      clearInterval(report);
    }

    call.close(1000);
    await live.next((m) => m.type === "event" && m.event.type === "call-end");
    feed.close();
    const record = (await (await bridgeFetch(bridge, `/calls/${callId}`)).json()) as CallRecord;
    expect(record).toMatchObject({ transport: "browser", endReason: "caller hung up" });
    expect(record.turns[0]).toMatchObject({ role: "assistant", text: GREETING });

    // The recording: a WAV, served whole or by byte range.
    const wav = await until(async () => {
      const r = await bridgeFetch(bridge, `/calls/${callId}/recording`);
      return r.ok ? Buffer.from(await r.arrayBuffer()) : undefined;
    }, "the recording");
    expect(wav.subarray(0, 4).toString()).toBe("RIFF");
    const part = await bridgeFetch(bridge, `/calls/${callId}/recording`, {
      headers: { range: "bytes=0-11" },
    });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 0-11/${wav.length}`);
    expect(
      Buffer.from(await part.arrayBuffer())
        .subarray(8, 12)
        .toString(),
    ).toBe("WAVE");
    const none = await bridgeFetch(bridge, "/calls/nosuchcall/recording");
    expect(none.status).toBe(404);
  });
});

describe("the bridge's token", () => {
  let bridge: Bridge;
  let dir: string;
  beforeAll(async () => {
    ({ bridge, dir } = await start({ BRIDGE_TOKEN: TOKEN }));
  });
  afterAll(async () => {
    await bridge.close(0);
    rmSync(dir, { recursive: true, force: true });
  });

  it("is asked of the console and /calls, not of probes and /metrics", async () => {
    const page = await fetch(`${bridge.url}/`);
    expect(page.status).toBe(401);
    expect(await page.text()).toContain("needs the bridge's token");
    expect((await fetch(`${bridge.url}/?token=wrong`)).status).toBe(401);
    const calls = await fetch(`${bridge.url}/calls`);
    expect(calls.status).toBe(401);
    expect(((await calls.json()) as { error: { message: string } }).error.message).toContain(
      "Authorization: Bearer",
    );
    const bearer = { authorization: `Bearer ${TOKEN}` };
    expect((await fetch(`${bridge.url}/calls`, { headers: bearer })).status).toBe(200);
    expect((await fetch(`${bridge.url}/metrics`)).status).toBe(200);
    expect((await fetch(`${bridge.url}/healthz`)).status).toBe(200);
    // The printed address carries the token.
    expect(bridge.entrances.console).toBe(`${bridge.url}/?token=${TOKEN}`);
  });

  it("trades the printed address's token for a cookie the page, its sockets and its audio then carry", async () => {
    const res = await fetch(`${bridge.url}/?token=${TOKEN}`, { redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/");
    const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
    expect(res.headers.get("set-cookie")).toMatch(/HttpOnly; SameSite=Strict; Path=\//);
    expect((await fetch(`${bridge.url}/`, { headers: { cookie } })).status).toBe(200);
    expect((await fetch(`${bridge.url}/console/latency`, { headers: { cookie } })).status).toBe(200);
    const feed = await open<ConsoleMessage>(wsUrl(bridge, LIVE_PATH), { cookie });
    expect(await feed.inbox.next(() => true)).toEqual({ type: "hello", calls: [] });
    feed.ws.close();
  });

  it("refuses sockets without the token, or opened by a page of another site", async () => {
    await expect(open(wsUrl(bridge, LIVE_PATH))).rejects.toThrow("HTTP 401");
    await expect(open(wsUrl(bridge, BROWSER_CALL_PATH))).rejects.toThrow("HTTP 401");
    const bearer = { authorization: `Bearer ${TOKEN}` };
    await expect(
      open(wsUrl(bridge, BROWSER_CALL_PATH), { ...bearer, origin: "https://elsewhere.example" }),
    ).rejects.toThrow("HTTP 403");
    const ok = await open(wsUrl(bridge, LIVE_PATH), { ...bearer, origin: bridge.url });
    ok.ws.close();
  });
});

describe("with the console off", () => {
  it("serves no page, and the records as before", async () => {
    const { bridge, dir } = await start({ CONSOLE_ENABLED: "false" });
    try {
      expect((await bridgeFetch(bridge, "/")).status).toBe(404);
      expect((await fetch(`${bridge.url}/calls`)).status).toBe(401);
      expect((await bridgeFetch(bridge, "/calls")).status).toBe(200);
      expect(bridge.browser).toBeUndefined();
      expect(bridge.entrances.console).toBeUndefined();
    } finally {
      await bridge.close(0);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("closed by default", () => {
  it("makes a token at first start, keeps it (mode 600) for the next start, and asks for it", async () => {
    const lines: string[] = [];
    const { bridge, dir } = await start({ CONSOLE_ENABLED: "false" }, undefined, lines);
    let again: Bridge | undefined;
    try {
      const token = bridge.token!;
      expect(token).toMatch(/^[\w-]{32}$/);
      const file = join(dir, "bridge-token");
      expect(readFileSync(file, "utf8").trim()).toBe(token);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(lines.join("")).toContain("made one and kept it in the file");
      expect((await fetch(`${bridge.url}/calls`)).status).toBe(401);
      expect((await bridgeFetch(bridge, "/calls")).status).toBe(200);
      await bridge.close(0);
      // The next start on the same data dir asks for the same token.
      ({ bridge: again } = await start({ CONSOLE_ENABLED: "false" }, dir));
      expect(again.token).toBe(token);
      expect((await fetch(`${again.url}/calls`, { headers: { authorization: "Bearer nope" } })).status).toBe(
        401,
      );
    } finally {
      await again?.close(0);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("opens on purpose with BRIDGE_TOKEN=off, and warns when it listens beyond loopback", async () => {
    const lines: string[] = [];
    const { bridge, dir } = await start(
      { BRIDGE_TOKEN: "off", HOST: "0.0.0.0", CONSOLE_ENABLED: "false" },
      undefined,
      lines,
    );
    try {
      expect(bridge.token).toBeUndefined();
      expect((await fetch(`${bridge.url}/calls`)).status).toBe(200);
      const warning = lines
        .map((l) => JSON.parse(l) as { level: number; msg: string })
        .find((l) => l.msg.startsWith("BRIDGE_TOKEN=off"));
      expect(warning?.level).toBe(40);
    } finally {
      await bridge.close(0);
      rmSync(dir, { recursive: true, force: true });
    }
    const quiet: string[] = [];
    const local = await start({ BRIDGE_TOKEN: "off", CONSOLE_ENABLED: "false" }, undefined, quiet);
    await local.bridge.close(0);
    rmSync(local.dir, { recursive: true, force: true });
    expect(quiet.join("")).not.toContain("BRIDGE_TOKEN=off");
  });
});
