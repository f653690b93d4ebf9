// What the session knows of an utterance reaches the recognition request: the hints' hotwords
// (speech over the agent: acknowledgements) go with the agent's own in E6's
// audio.input.transcription.hotwords, in one request and in a streamed upload alike. The service
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

function services(hotwords: string[]) {
  const client = new SvcClient({ baseURL: url, apiKey: "k", maxRetries: 0 });
  return svcServices(client, {
    chatModel: "svc-3.5-flash",
    ttsModel: "svc-tts-2",
    asrModel: "svcaudio-2.5-asr",
    voice: "en_female_aria",
    language: "en",
    hotwords,
  });
}

const pcm = new Int16Array(1600);
const hotwordsAsked = () => bodies.at(-1)?.body.audio?.input?.transcription?.hotwords;

describe("recognition hints on the wire", () => {
  it("sends the hints' hotwords with the agent's, each once, in one request", async () => {
    const asr = services(["invoice", "okay"]).asr;
    expect(
      await asr.recognize(pcm, 16000, new AbortController().signal, { hotwords: ["okay", "mm hmm"] }),
    ).toBe("okay");
    expect(bodies.at(-1)?.path).toBe("/v1/audio/asr/sse");
    expect(hotwordsAsked()).toEqual(["invoice", "okay", "mm hmm"]);
    await asr.recognize(pcm, 16000, new AbortController().signal);
    expect(hotwordsAsked()).toEqual(["invoice", "okay"]);
  });

  it("sends them in a streamed upload, and none at all when neither has any", async () => {
    const asr = services([]).asr;
    const up = asr.open(16000, new AbortController().signal, { hotwords: ["yeah"] });
    up.write(pcm);
    expect(await up.end()).toBe("okay");
    expect(hotwordsAsked()).toEqual(["yeah"]);
    const plain = asr.open(16000, new AbortController().signal);
    plain.write(pcm);
    await plain.end();
    expect(bodies.at(-1)?.body.audio?.input?.transcription).not.toHaveProperty("hotwords");
  });
});
