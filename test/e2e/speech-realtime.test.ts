// E5 WebSocket /v1/realtime/audio on the local service: the project's TtsSession client for the
// normal flow; a raw `ws` socket where the test must send what the client never would.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { OggPageParser } from "../../codecs/ogg.ts";
import { readOggOpus } from "../../codecs/opus.ts";
import { parseWav } from "../../codecs/wav.ts";
import type { TtsOutput, TtsSession } from "../../src/api/tts-session.ts";
import { EspeakPool } from "../../src/service/engines/tts/espeak-pool.ts";
import { officialVoice } from "../../src/service/engines/tts/voices.ts";
import { RealtimeTtsSession } from "../../src/service/routes/realtime-session.ts";
import { attachClonedVoices } from "../../src/service/speech/engines.ts";
import { KEY, useService } from "../service/helpers/service.ts";
import { clientFor, ffmpegToPcm, rms } from "../service/speech/helpers.ts";

const t = useService();
const client = () => clientFor(t.url, KEY);

type Ev = { type: string; data: Record<string, unknown>; event_id: string };

/** A raw connection that records every server event. */
class Raw {
  readonly events: Ev[] = [];
  private waiters: Array<() => void> = [];
  closed: { code: number; reason: string } | undefined;
  readonly ws: WebSocket;
  constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on("message", (d) => {
      this.events.push(JSON.parse(d.toString()) as Ev);
      for (const w of this.waiters.splice(0)) w();
    });
    ws.on("close", (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      for (const w of this.waiters.splice(0)) w();
    });
  }
  static open(query = "?model=svc-tts-2", key = KEY, path = "/v1/realtime/audio"): Promise<Raw> {
    const ws = new WebSocket(`${t.url.replace("http", "ws")}${path}${query}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    return new Promise((resolve, reject) => {
      ws.once("open", () => resolve(new Raw(ws)));
      ws.once("unexpected-response", (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      ws.once("error", reject);
    });
  }
  get sessionId(): string {
    return this.events.find((e) => e.type === "tts.connection.done")!.data.session_id as string;
  }
  send(type: string, data: Record<string, unknown> = {}): void {
    this.ws.send(JSON.stringify({ type, data: { session_id: this.sessionId, ...data } }));
  }
  /** Waits until `n` events of a type have arrived (or the socket closed). */
  async until(type: string, n = 1): Promise<Ev[]> {
    for (;;) {
      const got = this.events.filter((e) => e.type === type);
      if (got.length >= n) return got;
      if (this.closed)
        throw new Error(`closed before ${n} × ${type}: ${JSON.stringify(this.events.map((e) => e.type))}`);
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }
  async nextError(): Promise<Ev> {
    const before = this.events.filter((e) => e.type === "tts.response.error").length;
    return (await this.until("tts.response.error", before + 1)).at(-1)!;
  }
}

async function collect(s: TtsSession): Promise<TtsOutput[]> {
  const out: TtsOutput[] = [];
  for await (const o of s) out.push(o);
  return out;
}

const audioOf = (outs: TtsOutput[]) =>
  outs.filter((o): o is Extract<TtsOutput, { type: "audio" }> => o.type === "audio");
const int16 = (b: Uint8Array) => new Int16Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));

describe("E5 handshake", () => {
  it("checks the bearer key and the model before the upgrade", async () => {
    await expect(Raw.open("?model=svc-tts-2", "wrong")).rejects.toThrow("HTTP 401");
    await expect(Raw.open("")).rejects.toThrow("HTTP 400");
    await expect(Raw.open("?model=tts-1")).rejects.toThrow("HTTP 400");
    await expect(
      clientFor(t.url, "wrong").tts.connect({ model: "svc-tts-2", voice_id: "en_male_adam" }),
    ).rejects.toThrow();
  });

  it("announces a session id, answers tts.create, and every event has a unique event_id", async () => {
    const raw = await Raw.open();
    await raw.until("tts.connection.done");
    expect(raw.sessionId).toMatch(/^sess_/);
    raw.send("tts.create", {
      voice_id: "en_male_adam",
      response_format: "pcm",
      sample_rate: 8000,
      mode: "sentence",
    });
    await raw.until("tts.response.created");
    raw.send("tts.text.delta", { text: "One. Two. Three." });
    raw.send("tts.text.done");
    await raw.until("tts.response.audio.done");
    const ids = raw.events.map((e) => e.event_id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const e of raw.events) expect(e.data.session_id).toBe(raw.sessionId);
    await raw.until("never-sent").catch(() => {});
    expect(raw.closed?.code).toBe(1000);
  });
});

describe("E5 session flow (client)", () => {
  it("default mode: LLM tokens are cut into sentences as soon as one is complete; flush releases the rest", async () => {
    const s = await client().tts.connect({
      model: "svc-tts-2",
      voice_id: "en_female_aria",
      response_format: "pcm",
      sample_rate: 8000,
    });
    const seen: TtsOutput[] = [];
    const it_ = s[Symbol.asyncIterator]();
    const next = async () => {
      const r = await it_.next();
      if (r.done) throw new Error("session ended");
      seen.push(r.value);
      return r.value;
    };
    for (const tok of ["Thank", " you", " for", " calling", "."]) s.sendText(tok);
    // The first sentence is spoken before anything else is sent.
    const start = await next();
    expect(start).toMatchObject({ type: "sentence.start", text: "Thank you for calling." });
    let o: TtsOutput;
    do o = await next();
    while (o.type !== "sentence.end");
    for (const tok of [" How", " can", " I", " help"]) s.sendText(tok);
    s.flush();
    expect(await next()).toEqual({ type: "flushed" });
    expect(await next()).toMatchObject({ type: "sentence.start", text: "How can I help" });
    do o = await next();
    while (o.type !== "sentence.end");
    s.done();
    for (;;) {
      const r = await it_.next();
      if (r.done) break;
      seen.push(r.value);
    }
    const audio = audioOf(seen);
    // per sentence: unfinished…, finished
    const statuses = audio.map((a) => a.status).join(",");
    expect(statuses).toMatch(/^(unfinished,)+finished,(unfinished,)+finished$/);
    for (const a of audio) expect(a.duration).toBeCloseTo(a.audio.length / 2 / 8000, 6);
    const done = seen.at(-1)!;
    expect(done.type).toBe("done");
    // audio.done carries all the session's audio: here the pcm deltas end to end
    expect(Buffer.from((done as { audio: Uint8Array }).audio)).toEqual(
      Buffer.concat(audio.map((a) => a.audio)),
    );
    expect(s.endReason).toBe("done");
  });

  it("sentence mode splits complete text on punctuation, in order", async () => {
    const s = await client().tts.connect({
      model: "svc-tts-2",
      voice_id: "en_male_adam",
      response_format: "pcm",
      mode: "sentence",
    });
    s.sendText("Your balance is 42 dollars. Anything else? Goodbye!");
    s.done();
    const outs = await collect(s);
    expect(outs.filter((o) => o.type === "sentence.start").map((o) => (o as { text: string }).text)).toEqual([
      "Your balance is 42 dollars.",
      "Anything else?",
      "Goodbye!",
    ]);
  });

  it("speed_ratio and volume_ratio are applied", async () => {
    const say = async (extra: Record<string, number>) => {
      const audio = await client().tts.synthesize("Please hold the line.", {
        model: "svc-tts-2",
        voice_id: "en_male_adam",
        response_format: "pcm",
        sample_rate: 16000,
        ...extra,
      });
      return int16(audio);
    };
    const normal = await say({});
    const fast = await say({ speed_ratio: 2 });
    const quiet = await say({ volume_ratio: 0.25 });
    expect(normal.length / fast.length).toBeGreaterThan(1.6);
    expect(rms(quiet) / rms(normal)).toBeCloseTo(0.25, 1);
  });

  it("svcaudio-2.5-tts: () in deltas is not spoken; plan tier path works", async () => {
    const s = await clientFor(t.url, KEY, true).tts.connect({
      model: "svcaudio-2.5-tts",
      voice_id: "en_male_adam",
      response_format: "pcm",
    });
    s.sendText("(cheerful) Welcome back");
    s.sendText(" (pause) friend.");
    s.done();
    const outs = await collect(s);
    expect(outs.find((o) => o.type === "sentence.start")).toMatchObject({ text: "Welcome back friend." });
  });
});

describe("E5 formats", () => {
  const run = async (format: string, rate = 16000) => {
    const s = await client().tts.connect({
      model: "svc-tts-2",
      voice_id: "en_male_adam",
      response_format: format as "pcm",
      sample_rate: rate as 16000,
      mode: "sentence",
    });
    s.sendText("Hello there. How are you today?");
    s.done();
    const outs = await collect(s);
    return { deltas: audioOf(outs).map((a) => a.audio), done: (outs.at(-1) as { audio: Uint8Array }).audio };
  };

  it("plain formats: every delta decodes on its own; done holds one file of all audio", async () => {
    for (const format of ["wav", "mp3", "flac", "opus"]) {
      const { deltas, done } = await run(format);
      expect(deltas.length, format).toBeGreaterThanOrEqual(2);
      let total = 0;
      for (const d of deltas) {
        const pcm = format === "wav" ? parseWav(d).samples : ffmpegToPcm(d, 16000);
        expect(pcm.length, format).toBeGreaterThan(0);
        total += pcm.length;
      }
      const all = format === "wav" ? parseWav(done).samples : ffmpegToPcm(done, 16000);
      expect(Math.abs(all.length - total), format).toBeLessThan(16000 * 0.15);
    }
  });

  it("*_stream formats: the deltas form one continuous stream", async () => {
    for (const format of ["mp3_stream", "flac_stream", "opus_stream"]) {
      const { deltas, done } = await run(format);
      const joined = Buffer.concat(deltas);
      expect(Buffer.from(done).subarray(0, joined.length), format).toEqual(joined);
      const pcm = ffmpegToPcm(joined, 16000);
      expect(pcm.length / 16000, format).toBeGreaterThan(1.5);
    }
    // opus_stream: a single logical Ogg/Opus stream (one OpusHead), e.g. for @discordjs/voice
    const { deltas, done } = await run("opus_stream", 8000);
    const file = readOggOpus(done);
    expect(file.head.channels).toBe(1);
    expect(file.head.inputSampleRate).toBe(8000);
    expect(file.packets.length).toBeGreaterThan(50);
    expect(deltas[0]!.subarray(0, 4)).toEqual(new Uint8Array([0x4f, 0x67, 0x67, 0x53])); // "OggS"
    expect(deltas[1]!.subarray(28, 36).toString()).not.toBe("OpusHead");
    // One serial, pages in sequence, no packet split across pages (prism-media's demuxer, which
    // @discordjs/voice uses for StreamType.OggOpus, cannot join packets across pages).
    const pages = new OggPageParser().push(done);
    expect(new Set(pages.map((p) => p.serial)).size).toBe(1);
    pages.forEach((p, i) => {
      expect(p.sequence).toBe(i);
      expect(p.continued).toBe(false);
      if (p.segments.length > 0) expect(p.segments.at(-1)!).toBeLessThan(255);
      else expect(p.eos && i === pages.length - 1).toBe(true); // only the closing EOS page is empty
    });
    expect(pages[0]!.bos).toBe(true);
    expect(pages.at(-1)!.eos).toBe(true);
  });
});

describe("E5 errors keep the connection usable", () => {
  it("bad JSON, unknown type, wrong session_id, text before create, bad create, long text", async () => {
    const raw = await Raw.open();
    await raw.until("tts.connection.done");
    raw.ws.send("{not json");
    expect((await raw.nextError()).data.message).toMatch(/not valid JSON/);
    raw.send("tts.speak", {});
    expect((await raw.nextError()).data.message).toMatch(/unknown message type "tts.speak"/);
    raw.ws.send(
      JSON.stringify({ type: "tts.create", data: { session_id: "sess_other", voice_id: "en_male_adam" } }),
    );
    expect((await raw.nextError()).data.message).toMatch(/session_id "sess_other" does not match/);
    raw.send("tts.text.delta", { text: "hi" });
    expect((await raw.nextError()).data.message).toMatch(/before tts.create/);
    raw.send("tts.create", { voice_id: "en_male_adam", instruction: "calm" });
    const bad = await raw.nextError();
    expect(bad.data.code).toBe("400");
    expect(bad.data.message).toMatch(/instruction/);
    expect(bad.data.details).toEqual({ error: { param: "instruction" } });
    raw.send("tts.create", { voice_id: "en_male_adam", response_format: "pcm" });
    await raw.until("tts.response.created");
    raw.send("tts.create", { voice_id: "en_male_adam" });
    expect((await raw.nextError()).data.message).toMatch(/already created/);
    raw.send("tts.text.delta", { text: "x".repeat(1001) });
    expect((await raw.nextError()).data.message).toMatch(/at most 1000/);
    raw.send("tts.text.delta", { text: "Still working." });
    await raw.until("tts.response.sentence.end");
    raw.send("tts.text.done");
    await raw.until("tts.response.audio.done");
  });

  it("a generation failure is a tts.response.error with code, message and details.error", async () => {
    attachClonedVoices(t.svc.ctx, (_a, id) =>
      id === "voice-broken" ? { ...officialVoice("en_male_adam")!, espeak: "xx-none" } : undefined,
    );
    const raw = await Raw.open();
    await raw.until("tts.connection.done");
    raw.send("tts.create", {
      voice_id: "voice-broken",
      voice_label: { style: "news" },
      response_format: "pcm",
    });
    await raw.until("tts.response.created");
    raw.send("tts.text.delta", { text: "Hello." });
    const err = await raw.nextError();
    expect(err.data).toMatchObject({ code: "500", session_id: raw.sessionId });
    expect(err.data.message).toMatch(/synthesis failed/);
    expect(err.data.details).toHaveProperty("error");
    raw.send("tts.text.done");
    await raw.until("tts.response.audio.done");
  });
});

describe("E5 idle finish (shortened idle time, real engine)", () => {
  let pool: EspeakPool;
  beforeAll(async () => {
    pool = new EspeakPool({ size: 1 });
    await pool.start();
  });
  afterAll(() => pool.close());

  it("without client messages for the idle time, speaks the buffer, sends audio.done and closes", async () => {
    const sent: Ev[] = [];
    const sentAt: number[] = [];
    let closed: { code?: number; reason?: string } | undefined;
    let onClosed: () => void = () => {};
    const closedP = new Promise<void>((r) => {
      onClosed = r;
    });
    const session = new RealtimeTtsSession(
      {
        send: (d) => {
          sent.push(JSON.parse(d) as Ev);
          sentAt.push(performance.now());
        },
        close: (code, reason) => {
          closed = { code, reason };
          onClosed();
        },
      },
      { model: "svc-tts-2", account: "a", tts: pool, idleMs: 300 },
    );
    session.start();
    const sid = session.sessionId;
    session.onMessage(
      JSON.stringify({
        type: "tts.create",
        data: { session_id: sid, voice_id: "en_male_adam", response_format: "pcm" },
      }),
    );
    session.onMessage(
      JSON.stringify({ type: "tts.text.delta", data: { session_id: sid, text: "Are you still there" } }),
    );
    const lastMessageAt = performance.now();
    await closedP;
    expect(closed).toEqual({ code: 1000, reason: "idle timeout" });
    const types = sent.map((e) => e.type);
    expect(types.slice(0, 3)).toEqual([
      "tts.connection.done",
      "tts.response.created",
      "tts.response.sentence.start",
    ]);
    // Nothing was spoken before the idle time ran out (no sentence end, no flush): the sentence
    // started then, not as the text came (10 ms for a timer's rounding).
    expect(sentAt[2]! - lastMessageAt).toBeGreaterThan(300 - 10);
    expect(types.at(-1)).toBe("tts.response.audio.done");
    const done = sent.at(-1)!.data.audio as string;
    expect(Buffer.from(done, "base64").length).toBeGreaterThan(24000);
  });

  it("an idle session that was never created still ends with audio.done and a close", async () => {
    const sent: string[] = [];
    const closed = new Promise<number | undefined>((resolve) => {
      const s = new RealtimeTtsSession(
        { send: (d) => sent.push((JSON.parse(d) as Ev).type), close: (code) => resolve(code) },
        { model: "svc-tts-2", account: "a", tts: pool, idleMs: 100 },
      );
      s.start();
    });
    expect(await closed).toBe(1000);
    expect(sent).toEqual(["tts.connection.done", "tts.response.audio.done"]);
  });
});
