// AsrUpload writes Base64 straight into each body chunk, carrying 0–2 bytes between writes: the
// body that arrives must hold exactly the audio written, whatever the sizes of the writes.
import { describe, expect, it } from "vitest";
import { pcm16Format } from "../../src/api/asr.ts";
import type { AsrRequest } from "../../src/api/types/index.ts";
import { seededRandom } from "../helpers/noise.ts";
import { sendSse, useServerAndClient } from "./helpers/server.ts";

const t = useServerAndClient();
const meta = { session_id: "asr-1", timestamp: 1700000000000 };

describe("AsrUpload", () => {
  it("streams a body whose audio.data is the Base64 of every byte written, for writes of every size", async () => {
    const bodies: AsrRequest[] = [];
    t.srv.on("POST /v1/audio/asr/sse", (r, res) => {
      bodies.push(r.json as AsrRequest);
      return sendSse(res, [{ data: { type: "transcript.text.done", meta, text: "ok" } }]);
    });
    // Samples as bytes, and byte arrays of odd lengths, so groups of 3 straddle the writes.
    const rand = seededRandom(9);
    const writes: Array<Uint8Array | Int16Array> = [];
    for (const n of [1, 1, 1, 2, 3, 4, 5, 160, 1601, 0, 2, 7]) {
      writes.push(Uint8Array.from({ length: n }, () => Math.floor(rand() * 256)));
      writes.push(Int16Array.from({ length: n }, () => Math.floor(rand() * 65536) - 32768));
    }
    const upload = t.c.asr.upload(pcm16Format(16000));
    for (const w of writes) upload.write(w);
    expect(await upload.end().finalText()).toBe("ok");
    const expected = Buffer.concat(writes.map((w) => Buffer.from(w.buffer, w.byteOffset, w.byteLength)));
    expect(bodies.length).toBe(1);
    expect(bodies[0]!.audio.data).toBe(expected.toString("base64"));
    expect(bodies[0]!.audio.input).toEqual({ format: pcm16Format(16000) });
  });
});
