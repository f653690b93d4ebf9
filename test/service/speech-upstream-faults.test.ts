// Speech upstreams failing: refused, silent past the timeout, 5xx (503 stays overload), a malformed
// answer, audio that breaks off. Each gives the endpoint's own error (E6 `error` event, E4 JSON
// error or speech.audio.error, E5 tts.response.error) naming the upstream; never a hang, and never
// the embedded engine speaking instead.
import { createServer } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { pcm16Format } from "../../src/api/asr.ts";
import { TtsResponseError } from "../../src/api/errors.ts";
import {
  type FakeSpeechUpstream,
  type Fault,
  startFakeSpeechUpstream,
  toneCode,
} from "../fake-speech-upstream/index.ts";
import { dataOf, KEY, useService } from "./helpers/service.ts";
import { clientFor } from "./speech/helpers.ts";

let up: FakeSpeechUpstream;
let deadUrl = "";
beforeAll(async () => {
  up = await startFakeSpeechUpstream();
  // A port that was just free and is closed again: connections are refused.
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
  deadUrl = `http://127.0.0.1:${(probe.address() as { port: number }).port}`;
  await new Promise<void>((r) => probe.close(() => r()));
});
afterAll(() => up.close());
afterEach(() => {
  up.faults = {};
});

const TIMEOUT_MS = 300;
const live = useService(() => ({
  speech: {
    asr: { baseUrl: up.url, timeoutMs: TIMEOUT_MS },
    tts: { baseUrl: up.url, timeoutMs: TIMEOUT_MS },
  },
}));
const dead = useService(() => ({
  speech: { asr: { baseUrl: deadUrl }, tts: { baseUrl: deadUrl } },
}));

type Svc = typeof live;
const SPEECH = { model: "svc-tts-2", voice: "en_female_aria", input: "Hello there.", response_format: "wav" };

async function asrError(t: Svc): Promise<string> {
  const events = dataOf<{ type: string; message?: string; text?: string }>(
    await t.events("/v1/audio/asr/sse", {
      audio: {
        data: Buffer.from(toneCode("hi").buffer).toString("base64"),
        input: { format: pcm16Format(24000) },
      },
    }),
  );
  expect(events.map((e) => e.type)).toEqual(["error"]);
  return events[0]!.message!;
}

async function sseError(t: Svc): Promise<string> {
  const events = dataOf<{ type: string; message?: string }>(
    await t.events("/v1/audio/speech", { ...SPEECH, stream_format: "sse" }),
  );
  expect(events.map((e) => e.type)).toEqual(["speech.audio.error"]);
  return events[0]!.message!;
}

/** E5: one sentence; the session reports the failure as tts.response.error. */
async function wsError(t: Svc): Promise<TtsResponseError> {
  const s = await clientFor(t.url, KEY).tts.connect({
    model: "svc-tts-2",
    voice_id: "en_female_aria",
    response_format: "pcm",
    mode: "sentence",
  });
  s.sendText("Hello there.");
  s.done();
  const audio: unknown[] = [];
  try {
    for await (const o of s) if (o.type === "audio") audio.push(o);
  } catch (err) {
    expect(audio).toEqual([]);
    if (err instanceof TtsResponseError) return err;
    throw err;
  } finally {
    s.close();
  }
  throw new Error("the session ended without an error");
}

const CASES: { name: string; fault?: Fault; svc: () => Svc; message: RegExp; status: number }[] = [
  { name: "refused", svc: () => dead, message: /is unreachable: ECONNREFUSED/, status: 500 },
  {
    name: "silent past the timeout",
    fault: { hang: true },
    svc: () => live,
    message: new RegExp(`did not answer within ${TIMEOUT_MS} ms`),
    status: 500,
  },
  {
    name: "HTTP 500",
    fault: { status: 500 },
    svc: () => live,
    message: /answered HTTP 500: scripted failure 500/,
    status: 500,
  },
  {
    name: "HTTP 503",
    fault: { status: 503 },
    svc: () => live,
    message: /answered HTTP 503: scripted failure 503/,
    status: 503,
  },
  {
    name: "malformed",
    fault: { malformed: true },
    svc: () => live,
    message: /sent a malformed answer/,
    status: 500,
  },
];

describe.each(CASES)("upstream $name", ({ fault, svc, message, status }) => {
  const url = () => (svc() === dead ? deadUrl : up.url);

  it("E6: an error event naming the recognition server", async () => {
    up.faults.asr = fault;
    const m = await asrError(svc());
    expect(m).toMatch(message);
    expect(m).toContain(`upstream recognition server ${url()}`);
  });

  it("E4: a JSON error naming the speech server, and speech.audio.error when streamed", async () => {
    up.faults.tts = fault;
    const r = await svc().error("/v1/audio/speech", SPEECH);
    expect(r.status).toBe(status);
    expect(r.error.message).toMatch(message);
    expect(r.error.message).toContain(`upstream speech server ${url()}`);
    expect(await sseError(svc())).toMatch(message);
  });

  it("E5: tts.response.error naming the speech server (503 stays 503)", async () => {
    up.faults.tts = fault;
    const err = await wsError(svc());
    expect(err.code).toBe(String(status));
    expect(err.message).toMatch(message);
    expect(err.message).toContain(`upstream speech server ${url()}`);
  });
});

it("speech that breaks off mid-answer is an error, not a short sentence", async () => {
  up.faults.tts = { breakAfterChunks: 1 };
  const r = await live.error("/v1/audio/speech", SPEECH);
  expect(r.status).toBe(500);
  expect(r.error.message).toMatch(/upstream speech server .* sent a malformed answer: the audio broke off/);
});

it("a refused request to the recognition server reaches the client through the project's client too", async () => {
  const err = await clientFor(dead.url, KEY)
    .asr.recognize(toneCode("x"), pcm16Format(24000))
    .catch((e: Error) => e);
  expect(String(err)).toMatch(/upstream recognition server .* is unreachable/);
});
