// The Media Streams protocol over a real WebSocket against the real routes: inbound audio and
// DTMF to the session, outbound paced media with marks, played/cleared accounting, stop,
// hang-up and transfer (REST calls sent to a local stand-in for api.twilio.com).
import { once } from "node:events";
import Fastify from "fastify";
import twilio from "twilio";
import { afterEach, describe, expect, it } from "vitest";
import { restCallControl } from "../../../bridges/twilio/index.ts";
import type { OutboundMedia } from "../../../bridges/twilio/protocol.ts";
import { mulawDecode, mulawEncode } from "../../../codecs/g711.ts";
import { VirtualClock } from "../../../src/core/clock.ts";
import { until } from "../../helpers/until.ts";
import {
  ACCOUNT_SID,
  AUTH_TOKEN,
  type RecordedCall,
  type Rig,
  recorder,
  StreamClient,
  startRig,
  tone,
} from "./helpers.ts";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function rigWithCall(
  opts: Parameters<typeof startRig>[0] = {},
): Promise<{ rig: Rig; client: StreamClient; call: RecordedCall }> {
  const rig = await startRig(opts);
  cleanups.push(() => rig.close());
  const client = await StreamClient.open(rig.wsUrl);
  cleanups.push(async () => client.ws.close());
  client.connected();
  client.start({ From: "+15550001111", To: "+15552223333" });
  await until(() => rig.calls.length === 1, "onCall");
  return { rig, client, call: rig.calls[0]! };
}

/**
 * A ping's pong: the bridge handles a socket's messages in order and answers a ping as it reads it,
 * so once the pong is back, everything sent before the ping has been handled, and everything the
 * bridge wrote before its pong has arrived.
 */
async function roundTrip(client: StreamClient): Promise<void> {
  const pong = once(client.ws, "pong");
  client.ws.ping();
  await pong;
}

function payloadBytes(msg: OutboundMedia): Uint8Array {
  return new Uint8Array(Buffer.from(msg.media.payload, "base64"));
}

describe("inbound", () => {
  it("decodes µ-law media into 20 ms Int16 frames, reassembling other chunk sizes", async () => {
    const { client, call } = await rigWithCall();
    const pcm = tone(100, 300);
    const bytes = mulawEncode(pcm);
    client.media(bytes.subarray(0, 160));
    client.media(bytes.subarray(160, 240)); // 10 ms chunks
    client.media(bytes.subarray(240, 320));
    client.media(bytes.subarray(320, 560)); // 30 ms chunk
    client.media(bytes.subarray(560, 800));
    await until(() => call.frames.length === 5, "5 frames");
    expect(call.frames.every((f) => f.length === 160)).toBe(true);
    const joined = new Int16Array(800);
    call.frames.forEach((f, i) => {
      joined.set(f, i * 160);
    });
    expect(joined).toEqual(mulawDecode(bytes));
  });

  it("delivers DTMF digits in order", async () => {
    const { client, call } = await rigWithCall();
    for (const d of ["1", "2", "#", "*"]) client.dtmf(d);
    await until(() => call.digits.length === 4, "digits");
    expect(call.digits).toEqual(["1", "2", "#", "*"]);
  });

  it("holds events for a session that attaches late", async () => {
    const { client, call } = await rigWithCall({ attach: false });
    client.media(mulawEncode(tone(20)));
    client.dtmf("5");
    client.media(mulawEncode(tone(20, 500)));
    await roundTrip(client);
    const { listener, rec } = recorder();
    call.transport.attach(listener);
    expect(rec.frames.length).toBe(2);
    expect(rec.digits).toEqual(["5"]);
    expect(rec.frames[1]).toEqual(mulawDecode(mulawEncode(tone(20, 500))));
  });

  it("keeps at most the last second of audio for a late session, and every other event", async () => {
    const { client, call } = await rigWithCall({ attach: false });
    client.dtmf("1");
    const frames = Array.from({ length: 60 }, (_, i) => mulawEncode(tone(20, 200 + 20 * i)));
    for (const f of frames) client.media(f);
    client.dtmf("2");
    await roundTrip(client);
    const { listener, rec } = recorder();
    call.transport.attach(listener);
    expect(rec.digits).toEqual(["1", "2"]);
    expect(rec.frames.length).toBe(50);
    expect(rec.frames[0]).toEqual(mulawDecode(frames[10]!));
    expect(rec.frames[49]).toEqual(mulawDecode(frames[59]!));
  });

  it("ignores malformed, binary and unknown messages and carries on", async () => {
    const { client, call } = await rigWithCall();
    client.ws.send("not json");
    client.ws.send(Buffer.from([1, 2, 3]));
    client.send({ event: "media", sequenceNumber: "9", streamSid: "MZ0001", media: {} });
    client.send({ event: "teleport", sequenceNumber: "10", streamSid: "MZ0001" });
    client.dtmf("3");
    await until(() => call.digits.length === 1, "digit after garbage");
    expect(call.frames.length).toBe(0);
    expect(client.closed).toBeNull();
  });

  it("reports stop as the end of the call and closes the socket", async () => {
    const { client, call } = await rigWithCall();
    client.stop();
    await until(() => call.ended.length === 1 && client.closed !== null, "ended + closed");
    expect(call.ended).toEqual(["stop"]);
  });

  it("reports a lost socket as the end of the call", async () => {
    const { rig, client, call } = await rigWithCall();
    client.ws.terminate();
    await until(() => call.ended.length === 1, "ended");
    expect(call.ended[0]).toMatch(/^media stream closed/);
    expect(rig.routes.activeCalls).toBe(0);
  });
});

describe("outbound", () => {
  it("sends played audio as 20 ms µ-law media on the stream, with marks whose echoes count as heard", async () => {
    const clock = new VirtualClock();
    const { client, call } = await rigWithCall({ clock });
    const pcm = tone(1000, 350);
    call.transport.play(pcm);
    expect(call.transport.queuedMs()).toBe(1000);
    clock.advance(1000);
    await until(() => client.of("media").length === 50, "50 media frames");
    const media = client.of("media");
    expect(media.every((m) => m.streamSid === "MZ0001")).toBe(true);
    const bytes = media.map(payloadBytes);
    expect(bytes.every((b) => b.length === 160)).toBe(true);
    const all = new Uint8Array(8000);
    bytes.forEach((b, i) => {
      all.set(b, i * 160);
    });
    expect(all).toEqual(mulawEncode(pcm));
    // A mark every 100 ms of audio, the last right after the last frame.
    await until(() => client.of("mark").length === 10, "10 marks");
    const last = client.received.at(-1)!;
    expect(last.event).toBe("mark");
    expect(call.transport.playedMs()).toBe(0);
    for (const m of client.of("mark")) client.mark((m.mark as { name: string }).name);
    await until(() => call.played.at(-1) === 1000, "played 1000 ms");
    expect(call.played).toEqual([100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]);
    expect(call.transport.playedMs()).toBe(1000);
  });

  it("clear: sends clear, drops the queue, and does not count the marks Twilio echoes for cleared audio", async () => {
    const clock = new VirtualClock();
    const { client, call } = await rigWithCall({ clock });
    const t = call.transport;
    t.play(tone(2000));
    // The pacer keeps 200 ms at Twilio: 10 frames, two marks.
    await until(() => client.of("media").length === 10 && client.of("mark").length === 2, "lead sent");
    clock.advance(200);
    await until(() => client.of("media").length === 20, "20 frames");
    const marks = client.of("mark").map((m) => (m.mark as { name: string }).name);
    expect(marks.length).toBe(4);
    // Twilio has played the first 300 ms.
    for (const name of marks.slice(0, 3)) client.mark(name);
    await until(() => t.playedMs() === 300, "300 ms heard");
    t.clear();
    expect(t.queuedMs()).toBe(300);
    await until(() => client.of("clear").length === 1, "clear");
    expect(client.of("clear")[0]).toEqual({ event: "clear", streamSid: "MZ0001" });
    // After clear Twilio echoes the pending mark although its audio was never played.
    client.mark(marks[3]!);
    await roundTrip(client);
    clock.advance(1000);
    await roundTrip(client);
    expect(t.playedMs()).toBe(300);
    expect(client.of("media").length).toBe(20);
    // New audio continues from the heard position.
    t.play(tone(200));
    expect(t.queuedMs()).toBe(500);
    await until(() => client.of("mark").length === 6, "marks of the new audio");
    for (const m of client.of("mark").slice(4)) client.mark((m.mark as { name: string }).name);
    await until(() => t.playedMs() === 500, "500 ms heard");
    expect(call.played.at(-1)).toBe(500);
  });

  it("paces on the injected clock: the lead at once, then one frame per 20 ms", async () => {
    const clock = new VirtualClock();
    const { client, call } = await rigWithCall({ clock });
    call.transport.play(tone(1000));
    await until(() => client.of("media").length === 10, "lead");
    await roundTrip(client);
    expect(client.of("media").length).toBe(10);
    clock.advance(100);
    await until(() => client.of("media").length === 15, "5 more");
    clock.advance(1000);
    await until(() => client.of("media").length === 50, "all");
  });
});

describe("hang-up and transfer", () => {
  it("without account credentials: hang-up closes the media stream; transfer is refused", async () => {
    const { client, call } = await rigWithCall();
    await expect(call.transport.transfer("+15557654321")).rejects.toThrow(/credentials/);
    await call.transport.hangUp("caller said goodbye");
    await until(() => client.closed !== null && call.ended.length === 1, "closed");
    expect(call.ended[0]).toMatch(/hang-up \(caller said goodbye\)/);
  });

  it("with credentials: hang-up and transfer replace the call's TwiML through the REST API", async () => {
    const api = Fastify();
    const seen: Array<{ url: string; auth: string | undefined; twiml: string }> = [];
    api.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string" }, (_r, body, done) =>
      done(null, Object.fromEntries(new URLSearchParams(body as string))),
    );
    api.post("/2010-04-01/Accounts/:account/Calls/:call", async (req) => {
      seen.push({
        url: req.url,
        auth: req.headers.authorization,
        twiml: (req.body as Record<string, string>).Twiml ?? "",
      });
      return { sid: "CA0001", account_sid: ACCOUNT_SID, status: "in-progress" };
    });
    const apiBase = await api.listen({ host: "127.0.0.1", port: 0 });
    cleanups.push(() => api.close());
    // The helper's own HTTP client, with api.twilio.com swapped for the local stand-in.
    const httpClient = new twilio.RequestClient();
    const send = httpClient.request.bind(httpClient);
    httpClient.request = ((opts: Parameters<typeof send>[0]) =>
      send({ ...opts, uri: opts.uri.replace("https://api.twilio.com", apiBase) })) as typeof send;
    const callControl = restCallControl({
      accountSid: ACCOUNT_SID,
      authToken: AUTH_TOKEN,
      httpClient,
    });
    const { call } = await rigWithCall({ callControl });
    await call.transport.transfer("sip:desk@pbx.example.com");
    await call.transport.transfer("+1 (555) 765-4321");
    await call.transport.hangUp("done");
    expect(seen.map((s) => s.url)).toEqual(
      Array(3).fill(`/2010-04-01/Accounts/${ACCOUNT_SID}/Calls/CA0001.json`),
    );
    const basic = `Basic ${Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString("base64")}`;
    expect(seen.every((s) => s.auth === basic)).toBe(true);
    expect(seen.map((s) => s.twiml)).toEqual([
      '<?xml version="1.0" encoding="UTF-8"?><Response><Dial><Sip>sip:desk@pbx.example.com</Sip></Dial></Response>',
      '<?xml version="1.0" encoding="UTF-8"?><Response><Dial>+15557654321</Dial></Response>',
      '<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>',
    ]);
    await expect(call.transport.transfer("the front desk")).rejects.toThrow(/neither a phone number/);
  });
});
