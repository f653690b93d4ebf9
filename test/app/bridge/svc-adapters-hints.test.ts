// What the session knows of an utterance reaches the recognition request: speech over the agent is
// recognized listening for acknowledgements, sent with the agent's own hotwords in E6's
// audio.input.transcription.hotwords (English only), in one request and in a streamed upload alike. The service
// is a stand-in that records each request's body and answers as E6 does (SSE, then
// transcript.text.done): what it is asked is what this checks, not what a recognizer makes of it.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { svcServices } from "../../../app/bridge/svc-adapters.ts";
import { SvcClient } from "../../../src/api/client.ts";

let server: Server;
let url = "";
const bodies: Array<{
  path: string;
  body: { audio?: { input?: { transcription?: { hotwords?: string[] } } } };
}> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      bodies.push({ path: req.url ?? "", body: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
      res.writeHead(200, { "content-type": "text/event-stream" });
      const meta = { session_id: "s1", timestamp: Date.now() };
      const usage = {
        type: "realtime_asr",
        input_tokens: 1,
        input_token_details: { text_tokens: 0, audio_tokens: 1 },
        output_tokens: 1,
        total_tokens: 2,
      };
      res.end(`data: ${JSON.stringify({ type: "transcript.text.done", meta, text: "okay", usage })}\n\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function services(hotwords: string[], language = "en") {
  const client = new SvcClient({ baseURL: url, apiKey: "k", maxRetries: 0 });
  return svcServices(client, {
    chatModel: "svc-3.5-flash",
    ttsModel: "svc-tts-2",
    asrModel: "svcaudio-2.5-asr",
    voice: "en_female_aria",
    language,
    hotwords,
  });
}

const pcm = new Int16Array(1600);
const hotwordsAsked = () => bodies.at(-1)?.body.audio?.input?.transcription?.hotwords;

describe("recognition hints on the wire", () => {
  it("sends the acknowledgements with the agent's hotwords, each once, for speech over the agent", async () => {
    const asr = services(["invoice", "okay"]).asr;
    const signal = new AbortController().signal;
    expect(await asr.recognize(pcm, 16000, signal, { overAgent: true })).toBe("okay");
    expect(bodies.at(-1)?.path).toBe("/v1/audio/asr/sse");
    const sent = hotwordsAsked()!;
    expect(sent.slice(0, 2)).toEqual(["invoice", "okay"]);
    expect(sent).toEqual(expect.arrayContaining(["yeah", "mm", "uh-huh", "go on"]));
    expect(sent.filter((w) => w === "okay")).toHaveLength(1);
    // The caller's own turns: the agent's hotwords alone.
    await asr.recognize(pcm, 16000, signal);
    expect(hotwordsAsked()).toEqual(["invoice", "okay"]);
    await asr.recognize(pcm, 16000, signal, { overAgent: false });
    expect(hotwordsAsked()).toEqual(["invoice", "okay"]);
  });

  it("sends them in a streamed upload, none in another language, and no field when there are none", async () => {
    const up = services([]).asr.open(16000, new AbortController().signal, { overAgent: true });
    up.write(pcm);
    expect(await up.end()).toBe("okay");
    expect(hotwordsAsked()).toEqual(expect.arrayContaining(["okay", "yeah"]));
    const zh = services([], "zh").asr.open(16000, new AbortController().signal, { overAgent: true });
    zh.write(pcm);
    await zh.end();
    expect(bodies.at(-1)?.body.audio?.input?.transcription).not.toHaveProperty("hotwords");
    const zhOwn = services(["退款"], "zh").asr;
    await zhOwn.recognize(pcm, 16000, new AbortController().signal, { overAgent: true });
    expect(hotwordsAsked()).toEqual(["退款"]);
  });
});
