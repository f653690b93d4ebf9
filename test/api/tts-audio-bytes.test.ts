// Audio deltas read from the message bytes (no string of the audio) must give exactly what the full
// JSON parse gives: the same audio bytes from the output iterator, the same events from events(),
// whatever the field order, padding or escapes of the message.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SvcClient } from "../../src/api/client.ts";
import type { TtsOutput } from "../../src/api/tts-session.ts";
import type { TtsServerEvent } from "../../src/api/types/index.ts";
import { seededBytes } from "../helpers/noise.ts";
import { startServer, type TestServer } from "./helpers/server.ts";

/** Stand-in PCM. */
const bytes = (n: number, seed: number) => Buffer.from(seededBytes(n, seed));

const pcm = [
  bytes(4000, 1),
  bytes(3999, 2),
  bytes(2, 3),
  Buffer.from([0xff, 0xfb, 0xff]),
  bytes(0, 5),
  bytes(640, 6),
];
const b64 = (b: Buffer) => b.toString("base64");
/** The messages after the handshake, as text: audio deltas in the shapes a server may send. */
const messages = [
  // As the local service writes them.
  `{"type":"tts.response.audio.delta","data":{"session_id":"s1","status":"unfinished","audio":"${b64(pcm[0]!)}","duration":0.25},"event_id":"e1"}`,
  // Other field order, spaces, unpadded Base64.
  `{ "event_id": "e2", "data": { "duration": 0.2, "audio":"${b64(pcm[1]!).replace(/=+$/, "")}", "status": "finished", "session_id": "s1" }, "type": "tts.response.audio.delta" }`,
  // An escape elsewhere in the message: the full parse reads it.
  `{"type":"tts.response.audio.delta","data":{"session_id":"s\\"1","status":"unfinished","audio":"${b64(pcm[2]!)}","duration":0.01},"event_id":"e3"}`,
  // JSON's escaped slash inside the audio itself.
  `{"type":"tts.response.audio.delta","data":{"session_id":"s1","status":"unfinished","audio":"${b64(pcm[3]!).replaceAll("/", "\\/")}","duration":0.01},"event_id":"e4"}`,
  // Empty audio; a key named audio before the real one (under another object).
  `{"type":"tts.response.audio.delta","data":{"session_id":"s1","status":"unfinished","audio":"","duration":0},"event_id":"e5"}`,
  `{"meta":{"audio":"AAAA"},"type":"tts.response.audio.delta","data":{"session_id":"s1","status":"finished","audio":"${b64(pcm[5]!)}","duration":0.04},"event_id":"e6"}`,
  // Not a delta, though it carries audio: the session's end.
  `{"type":"tts.response.audio.done","data":{"session_id":"s1","audio":"${b64(Buffer.concat(pcm))}"},"event_id":"e7"}`,
];

let srv: TestServer;
let c: SvcClient;
beforeEach(async () => {
  srv = await startServer();
  srv.onWs("/v1/realtime/audio", (ws) => {
    ws.send(JSON.stringify({ type: "tts.connection.done", data: { session_id: "s1" }, event_id: "e0" }));
    ws.on("message", (raw) => {
      const msg = JSON.parse(raw.toString()) as { type: string };
      if (msg.type === "tts.create") {
        ws.send(
          JSON.stringify({ type: "tts.response.created", data: { session_id: "s1" }, event_id: "e00" }),
        );
        for (const m of messages) ws.send(m);
        ws.close(1000, "done");
      }
    });
  });
  c = new SvcClient({ baseURL: srv.url, apiKey: "sk-ws" });
});
afterEach(async () => {
  await srv.close();
});

const opts = {
  model: "svc-tts-2",
  voice_id: "alloy",
  response_format: "pcm" as const,
  sample_rate: 8000 as const,
};

describe("TTS audio deltas read from bytes", () => {
  it("yields the audio the full parse yields, for every shape of message", async () => {
    const s = await c.tts.connect(opts);
    const outs: TtsOutput[] = [];
    for await (const o of s) outs.push(o);
    const audio = outs.filter((o) => o.type === "audio");
    expect(audio.map((o) => Buffer.from(o.audio))).toEqual(pcm);
    expect(audio.map((o) => [o.duration, o.status])).toEqual([
      [0.25, "unfinished"],
      [0.2, "finished"],
      [0.01, "unfinished"],
      [0.01, "unfinished"],
      [0, "unfinished"],
      [0.04, "finished"],
    ]);
    expect(Buffer.from(await s.finished)).toEqual(Buffer.concat(pcm));
  });

  it("gives events() the events as sent, the audio as its Base64 text", async () => {
    const s = await c.tts.connect(opts);
    const events: TtsServerEvent[] = [];
    for await (const ev of s.events()) events.push(ev);
    expect(events).toEqual(messages.map((m) => JSON.parse(m)));
  });
});
