// E6 with the body streamed while the audio is captured (AsrUpload, chunked transfer) against the
// local service, which recognizes it as it arrives; and raw chunked bodies the service must read
// like any other JSON (fields in any order, other formats, malformed ones).
import { execFileSync } from "node:child_process";
import { request } from "node:http";
import { describe, expect, it } from "vitest";
import { pcm16Format } from "../../src/api/asr.ts";
import { KEY, useService } from "../service/helpers/service.ts";
import { clientFor, wordErrors } from "../service/speech/helpers.ts";

const t = useService();
const client = () => clientFor(t.url, KEY);

/** espeak-ng speech as raw 16-bit PCM at `rate` (sox resamples). */
function speechPcm(text: string, rate: number): Buffer {
  return execFileSync("sh", [
    "-c",
    `espeak-ng -v en-us --stdout "$1" | sox -D -t wav - -t raw -r ${rate} -e signed -b 16 -c 1 -`,
    "_",
    text,
  ]);
}

const LONG = "i want to cancel my subscription and get a refund for last month";

/** A POST with a chunked body (no content-length), sent in the given pieces. */
function chunkedPost(pieces: string[]): Promise<{ status: number; body: string }> {
  const url = new URL("/v1/audio/asr/sse", t.url);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        headers: {
          authorization: `Bearer ${KEY}`,
          "content-type": "application/json",
          accept: "text/event-stream",
        },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => {
          body += c;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    for (const p of pieces) req.write(p);
    req.end();
  });
}

const doneText = (sse: string) => {
  const last = sse
    .split("\n")
    .filter((l) => l.startsWith("data: "))
    .map((l) => JSON.parse(l.slice(6)) as { type: string; text?: string })
    .at(-1);
  expect(last?.type).toBe("transcript.text.done");
  return last?.text ?? "";
};

describe("E6 with the audio streamed as it is captured", () => {
  it("an upload written in 20 ms pieces gives what one request with the same audio gives", async () => {
    const pcm = speechPcm(LONG, 16000);
    const upload = client().asr.upload(pcm16Format(16000));
    for (let at = 0; at < pcm.length; at += 640) {
      upload.write(pcm.subarray(at, at + 640));
      if (at % 32000 === 0) await new Promise((r) => setTimeout(r, 20));
    }
    const streamed = await upload.end().finalResult();
    const whole = await client().asr.recognize(pcm, pcm16Format(16000));
    expect(streamed.usage.input_token_details.audio_tokens).toBe(
      whole.usage.input_token_details.audio_tokens,
    );
    const { errors, words } = wordErrors(whole.text, streamed.text);
    expect(words).toBeGreaterThan(6);
    expect(errors / words).toBeLessThanOrEqual(0.25);
    expect(streamed.text).toMatch(/subscription|refund/);
  });

  it("8 kHz samples in odd-sized pieces (split inside samples and Base64 groups) are resampled as one", async () => {
    const pcm = speechPcm("thank you very much", 8000);
    const pieces = [1001, 7, 2, 4093];
    const a = client().asr.upload(pcm16Format(8000));
    let at = 0;
    for (let i = 0; at < pcm.length; i++) {
      const n = pieces[i % pieces.length]!;
      a.write(pcm.subarray(at, at + n));
      at += n;
    }
    const streamed = await a.end().finalText();
    const b = client().asr.upload(pcm16Format(8000));
    b.write(pcm);
    expect(await b.end().finalText()).toBe(streamed);
    expect(streamed.length).toBeGreaterThan(0);
  });

  it("a chunked body is ordinary JSON: data before input, wav format, and escaped slashes all work", async () => {
    const wav = execFileSync("espeak-ng", ["-v", "en-us", "--stdout", "thank you very much"]);
    const b64 = wav.toString("base64");
    const reference = (await client().asr.recognize(wav, { type: "wav" })).text;
    const dataFirst = `{"audio":{"data":"${b64}","input":{"format":{"type":"wav"}}}}`;
    const r1 = await chunkedPost([dataFirst.slice(0, 30), dataFirst.slice(30, 5000), dataFirst.slice(5000)]);
    expect(r1.status).toBe(200);
    expect(doneText(r1.body)).toBe(reference);
    const escaped = `{"audio":{"input":{"format":{"type":"wav"}},"data":"${b64.replaceAll("/", "\\/")}"}}`;
    const cut = escaped.indexOf("\\/") + 1; // between the backslash and its slash
    const r2 = await chunkedPost([escaped.slice(0, cut), escaped.slice(cut)]);
    expect(r2.status).toBe(200);
    expect(doneText(r2.body)).toBe(reference);
  });

  it("a malformed chunked body is refused with 400 naming what is wrong", async () => {
    const head = '{"audio":{"input":{"format":{"type":"pcm","rate":16000,"bits":16,"channel":1}},"data":"';
    const notB64 = await chunkedPost([head, "AAAA$$$$", '"}}']);
    expect(notB64.status).toBe(400);
    expect(notB64.body).toMatch(/audio\.data/);
    const cutShort = await chunkedPost([head, "AAAAAAAA"]);
    expect(cutShort.status).toBe(400);
    expect(cutShort.body).toMatch(/not valid JSON/);
    const badRate = await chunkedPost([head.replace("16000", "0"), "AAAAAAAA", '"}}']);
    expect(badRate.status).toBe(400);
    expect(badRate.body).toMatch(/audio\.input\.format\.rate/);
    const empty = await chunkedPost([head, '"}}']);
    expect(empty.status).toBe(400);
    expect(empty.body).toMatch(/audio\.data/);
  });
});
