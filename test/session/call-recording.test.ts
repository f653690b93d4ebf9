// The recording decorator on virtual time around a fake transport: everything passes through
// untouched, and the WAV file (read back with codecs/wav.ts and checked with soxi) holds the
// caller on the left and what the caller heard of the agent on the right, on one timeline.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { levelDbfs } from "../../codecs/pcm.ts";
import { parseWav } from "../../codecs/wav.ts";
import { VirtualClock } from "../../src/core/clock.ts";
import { CallRecorder, RecordingTransport } from "../../src/session/call-recording.ts";
import type { AgentAudio, CallInfo, CallTransport, TransportListener } from "../../src/session/transport.ts";
import { splitStereo } from "../helpers/stereo.ts";

class FakeTransport implements CallTransport {
  readonly info: CallInfo;
  readonly inputRate: number;
  readonly output: { kind: "pcm"; rate: number };
  listener: TransportListener | undefined;
  readonly plays: Int16Array[] = [];
  clears = 0;
  readonly calls: string[] = [];
  constructor(rates: { input: number; output: number }, callId = "CA-rec-1") {
    this.info = { callId, transport: "test", params: {} };
    this.inputRate = rates.input;
    this.output = { kind: "pcm", rate: rates.output };
  }
  attach(listener: TransportListener): void {
    this.listener = listener;
  }
  play(audio: AgentAudio): void {
    if (!(audio instanceof Int16Array)) throw new TypeError("this transport plays PCM");
    this.plays.push(audio);
  }
  clear(): void {
    this.clears++;
  }
  queuedMs(): number {
    return 1234;
  }
  playedMs(): number {
    return 567;
  }
  async hangUp(reason: string): Promise<void> {
    this.calls.push(`hangUp ${reason}`);
  }
  async transfer(target: string): Promise<void> {
    this.calls.push(`transfer ${target}`);
  }
}

/** What the session would see. */
function sessionListener() {
  const got = {
    frames: [] as Int16Array[],
    digits: [] as string[],
    played: [] as number[],
    ended: [] as string[],
  };
  const listener: TransportListener = {
    audio: (f) => got.frames.push(f.slice()),
    dtmf: (d) => got.digits.push(d),
    played: (ms) => got.played.push(ms),
    ended: (r) => got.ended.push(r),
  };
  return { got, listener };
}

const soxi = (flag: string, file: string) => execFileSync("soxi", [flag, file], { encoding: "utf8" }).trim();
const valuesIn = (pcm: Int16Array, from: number, to: number) => [...new Set(pcm.subarray(from, to))];

/** A recording to `<dir>/<name>` around a fake transport of these rates, attached, on virtual time. */
function attachedRecording(rates: { input: number; output: number }, name: string) {
  const clock = new VirtualClock();
  const inner = new FakeTransport(rates);
  const path = join(dir, name);
  const rec = new RecordingTransport(inner, { path, clock, onError: (e) => expect.fail(e.message) });
  rec.attach(sessionListener().listener);
  return { clock, inner, path, rec };
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "vb-call-recording-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("RecordingTransport", () => {
  it("records caller left and heard agent right at their places, cleared audio and gaps left out", async () => {
    const clock = new VirtualClock(5000); // the call's timeline starts when it does, not at 0
    const inner = new FakeTransport({ input: 8000, output: 8000 });
    const errors: Error[] = [];
    const path = join(dir, "call.wav");
    const rec = new RecordingTransport(inner, { path, clock, onError: (e) => errors.push(e) });
    const { got, listener } = sessionListener();
    rec.attach(listener);
    expect(rec.info).toBe(inner.info);
    expect([rec.inputRate, rec.output, rec.rate]).toEqual([8000, { kind: "pcm", rate: 8000 }, 8000]);

    // One reused buffer, as the Twilio transport decodes into: the recording must copy.
    const buf = new Int16Array(160);
    const agentA = new Int16Array(8000).fill(1000); // 1 s
    const agentB = new Int16Array(3200).fill(2000); // 400 ms
    let sent = 0;
    for (let ms = 20; ms <= 3000; ms += 20) {
      clock.advance(20);
      // Caller frames (value = frame number) stop between 2000 and 2400 ms: lost on the way.
      if (ms <= 2000 || ms > 2400) {
        buf.fill(ms / 20);
        inner.listener!.audio(buf);
        sent++;
      }
      if (ms === 200) rec.play(agentA); // heard from 200 ms…
      if (ms === 700) rec.clear(); // …until the barge-in at 700 ms
      if (ms === 1500) rec.play(agentB); // the next reply: 1500-1900 ms
      if (ms === 1000) inner.listener!.dtmf("5");
      if (ms === 1200) inner.listener!.played(500);
    }
    // Durable as the call goes: before the end, the file on disk is already a WAV of most of it.
    await rec.flushed();
    const midway = parseWav(new Uint8Array(readFileSync(path)));
    expect(midway.channels).toBe(2);
    expect(midway.dataBytes / 4).toBeGreaterThanOrEqual(8000 * 1.5);

    // Everything passed through untouched.
    expect(got.frames).toHaveLength(sent);
    expect(got.frames[0]![0]).toBe(1);
    expect(got.digits).toEqual(["5"]);
    expect(got.played).toEqual([500]);
    expect(inner.plays).toEqual([agentA, agentB]);
    expect(inner.clears).toBe(1);
    expect([rec.queuedMs(), rec.playedMs()]).toEqual([1234, 567]);
    await rec.hangUp("bye");
    await rec.transfer("+1555");
    expect(inner.calls).toEqual(["hangUp bye", "transfer +1555"]);

    // The far side hangs up: the session hears it, and the recording completes itself.
    inner.listener!.ended("stop");
    expect(got.ended).toEqual(["stop"]);
    await rec.close();
    expect(errors).toEqual([]);

    const wav = parseWav(new Uint8Array(readFileSync(path)));
    expect(wav).toMatchObject({ sampleRate: 8000, channels: 2, bitsPerSample: 16, format: "pcm" });
    expect(soxi("-c", path)).toBe("2");
    expect(soxi("-r", path)).toBe("8000");
    expect(soxi("-b", path)).toBe("16");
    expect(Number(soxi("-D", path))).toBeCloseTo(3.0, 3);
    expect(rec.recordedSeconds).toBeCloseTo(3.0, 3);

    const { left, right } = splitStereo(wav.samples);
    const at = (ms: number) => ms * 8;
    // Caller: frame k where it ended on the clock; the lost stretch is silence.
    for (let ms = 20; ms <= 2000; ms += 20) expect(valuesIn(left, at(ms - 20), at(ms))).toEqual([ms / 20]);
    expect(valuesIn(left, at(2000), at(2400))).toEqual([0]);
    for (let ms = 2420; ms <= 3000; ms += 20) expect(valuesIn(left, at(ms - 20), at(ms))).toEqual([ms / 20]);
    // Agent: what the caller heard, where they heard it.
    expect(valuesIn(right, 0, at(200))).toEqual([0]);
    expect(valuesIn(right, at(200), at(700))).toEqual([1000]);
    expect(valuesIn(right, at(700), at(1500))).toEqual([0]);
    expect(valuesIn(right, at(1500), at(1900))).toEqual([2000]);
    expect(valuesIn(right, at(1900), at(3000))).toEqual([0]);
  });

  it("resamples the agent to the inbound rate when the transport's rates differ", async () => {
    const { clock, inner, path, rec } = attachedRecording({ input: 16000, output: 8000 }, "wide.wav");
    const tone = Int16Array.from({ length: 4000 }, (_, i) =>
      Math.round(8000 * Math.sin((2 * Math.PI * 500 * i) / 8000)),
    );
    const silent = new Int16Array(320);
    for (let ms = 20; ms <= 1500; ms += 20) {
      clock.advance(20);
      inner.listener!.audio(silent);
      if (ms === 400) rec.play(tone); // 400-900 ms
    }
    await rec.close();
    expect(soxi("-r", path)).toBe("16000");
    expect(soxi("-c", path)).toBe("2");
    expect(Number(soxi("-D", path))).toBeCloseTo(1.5, 3);
    const { right } = splitStereo(parseWav(new Uint8Array(readFileSync(path))).samples);
    const window = (fromMs: number, toMs: number) => right.subarray(fromMs * 16, toMs * 16);
    // 8000 peak is -12.3 dBFS; a sine's RMS is 3 dB under its peak.
    expect(levelDbfs(window(420, 880))).toBeCloseTo(-15.3, 0);
    expect(levelDbfs(window(0, 390))).toBeLessThan(-80);
    expect(levelDbfs(window(910, 1500))).toBeLessThan(-80);
  });

  it("records members who talk at once (a Discord channel) mixed on the left, neither dropped", async () => {
    const { clock, inner, path, rec } = attachedRecording({ input: 16000, output: 48000 }, "group.wav");
    const ann = { id: "ann", name: "Ann" };
    const bob = { id: "bob", name: "Bob" };
    // Both speak from 0.2 to 1.2 s, each member's frame every 20 ms (Discord sends them apart).
    for (let ms = 20; ms <= 2000; ms += 20) {
      clock.advance(20);
      if (ms > 200 && ms <= 1200) {
        inner.listener!.audio(new Int16Array(320).fill(1000), ann);
        inner.listener!.audio(new Int16Array(320).fill(300), bob);
      }
    }
    await rec.close();
    expect(Number(soxi("-D", path))).toBeCloseTo(2, 3);
    const { left } = splitStereo(parseWav(new Uint8Array(readFileSync(path))).samples);
    expect(valuesIn(left, 0, 200 * 16)).toEqual([0]);
    expect(valuesIn(left, 200 * 16, 1200 * 16)).toEqual([1300]);
    expect(valuesIn(left, 1200 * 16, 2000 * 16)).toEqual([0]);
  });

  it("goes on recording when a slow disk makes it drop audio, leaving silence in its place", async () => {
    const clock = new VirtualClock();
    const inner = new FakeTransport({ input: 8000, output: 8000 });
    const path = join(dir, "slow.wav");
    const errors: Error[] = [];
    const rec = new RecordingTransport(inner, { path, clock, onError: (e) => errors.push(e) });
    rec.attach(sessionListener().listener);
    const frame = new Int16Array(160).fill(7);
    const talk = (ms: number) => {
      for (let t = 0; t < ms; t += 20) {
        clock.advance(20);
        inner.listener!.audio(frame);
      }
    };
    // 200 s of call before the file can take any of it: the backlog passes its 4 MiB bound.
    talk(200_000);
    await rec.flushed();
    talk(2000);
    await rec.close();
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toMatch(/behind/);
    const { left } = splitStereo(parseWav(new Uint8Array(readFileSync(path))).samples);
    expect(left.length).toBe(8000 * 202);
    // About 131 one-second chunks (32,000 bytes each) fit the backlog; the rest of the burst went.
    const kept = Math.floor((4 * 1024 * 1024) / 32000);
    expect(valuesIn(left, 0, 8000 * (kept - 1))).toEqual([7]);
    expect(valuesIn(left, 8000 * (kept + 1), 8000 * 199)).toEqual([0]);
    expect(valuesIn(left, 8000 * 200, 8000 * 202)).toEqual([7]);
  });

  it("reports a failure once and the call goes on unrecorded", async () => {
    const clock = new VirtualClock();
    const inner = new FakeTransport({ input: 8000, output: 8000 });
    const blocker = join(dir, "file");
    writeFileSync(blocker, "");
    const errors: Error[] = [];
    const rec = new RecordingTransport(inner, {
      path: join(blocker, "call.wav"),
      clock,
      onError: (e) => errors.push(e),
    });
    const { got, listener } = sessionListener();
    rec.attach(listener);
    const frame = new Int16Array(160).fill(3);
    for (let ms = 20; ms <= 3000; ms += 20) {
      clock.advance(20);
      inner.listener!.audio(frame);
      if (ms === 100) rec.play(frame);
      if (ms % 1000 === 0) await rec.flushed();
    }
    await rec.close();
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toMatch(/ENOTDIR/);
    expect(got.frames).toHaveLength(150);
    expect(inner.plays).toHaveLength(1);
    // Once failed, the timer stops: nothing is left scheduled for the call.
    expect(clock.pendingTimers).toBe(0);
  });
});

describe("CallRecorder", () => {
  it("records each call to <dir>/<callId>.wav and completes open recordings on close", async () => {
    const clock = new VirtualClock();
    const recDir = join(dir, "recordings", "nested");
    const failures: string[] = [];
    const recorder = new CallRecorder(recDir, clock, (_e, callId) => failures.push(callId));
    expect(existsSync(recDir)).toBe(true);
    const a = recorder.record(new FakeTransport({ input: 8000, output: 8000 }, "CA/odd:id"));
    const b = recorder.record(new FakeTransport({ input: 8000, output: 8000 }, "CA-two"));
    expect(a.path).toBe(join(recDir, "CA_odd_id.wav"));
    expect(b.path).toBe(join(recDir, "CA-two.wav"));
    a.attach(sessionListener().listener);
    b.attach(sessionListener().listener);
    clock.advance(2000);
    await a.close();
    expect(recorder.open).toBe(1);
    clock.advance(500);
    await recorder.close();
    expect(recorder.open).toBe(0);
    expect(Number(soxi("-D", a.path))).toBeCloseTo(2.0, 3);
    expect(Number(soxi("-D", b.path))).toBeCloseTo(2.5, 3);
    expect(failures).toEqual([]);
  });

  it("keeps every recording of a call id: <callId>.wav, then -2, -3 (a reconnect, a restart), each intact", async () => {
    const clock = new VirtualClock();
    const logged: { callId: string; path: string; msg: string; level: number }[] = [];
    const log = pino({ level: "info" }, { write: (line: string) => logged.push(JSON.parse(line)) });
    const failures: string[] = [];
    const onError = (_e: Error, callId: string) => failures.push(callId);
    /** One session of the call: `seconds` of caller frames all holding `value`, then the end. */
    const session = async (recorder: CallRecorder, value: number, seconds: number) => {
      const inner = new FakeTransport({ input: 8000, output: 8000 }, "CA/same");
      const rec = recorder.record(inner);
      rec.attach(sessionListener().listener);
      const frame = new Int16Array(160).fill(value);
      for (let ms = 0; ms < seconds * 1000; ms += 20) {
        clock.advance(20);
        inner.listener!.audio(frame);
      }
      inner.listener!.ended("stop");
      await rec.close();
      return rec.path;
    };
    const first = new CallRecorder(dir, clock, onError, log);
    const paths = [await session(first, 11, 1), await session(first, 22, 1.5)];
    // The bridge restarts: a new recorder on the same directory still keeps both.
    await first.close();
    paths.push(await session(new CallRecorder(dir, clock, onError, log), 33, 0.5));

    expect(paths).toEqual(["CA_same.wav", "CA_same-2.wav", "CA_same-3.wav"].map((n) => join(dir, n)));
    for (const [i, [value, seconds]] of [
      [11, 1],
      [22, 1.5],
      [33, 0.5],
    ].entries()) {
      const wav = parseWav(new Uint8Array(readFileSync(paths[i]!)));
      expect(wav).toMatchObject({ sampleRate: 8000, channels: 2, bitsPerSample: 16 });
      const { left, right } = splitStereo(wav.samples);
      expect(left.length).toBe(8000 * seconds!);
      expect(valuesIn(left, 0, left.length)).toEqual([value]);
      expect(valuesIn(right, 0, right.length)).toEqual([0]);
    }
    expect(failures).toEqual([]);
    // One info line per call, naming the file that call actually went to.
    expect(logged.map((l) => [l.level, l.callId, l.path])).toEqual(paths.map((p) => [30, "CA/same", p]));
    expect(logged.map((l) => l.msg)).toEqual(paths.map((p) => `recording the call to ${p}`));
  });

  it("gives two sessions of one call id open at once a file each, neither losing audio", async () => {
    const clock = new VirtualClock();
    const recorder = new CallRecorder(dir, clock, (e) => expect.fail(e.message));
    const inners = Array.from(
      { length: 2 },
      () => new FakeTransport({ input: 8000, output: 8000 }, "CA-dup"),
    );
    const recs = inners.map((t) => recorder.record(t));
    for (const rec of recs) rec.attach(sessionListener().listener);
    const frames = [new Int16Array(160).fill(7), new Int16Array(160).fill(9)];
    for (let ms = 20; ms <= 2500; ms += 20) {
      clock.advance(20);
      inners[0]!.listener!.audio(frames[0]!);
      inners[1]!.listener!.audio(frames[1]!);
      if (ms % 1000 === 0) await Promise.all(recs.map((r) => r.flushed()));
    }
    expect(recorder.open).toBe(2);
    await recorder.close();
    expect(recorder.open).toBe(0);
    expect(recs.map((r) => r.path).sort()).toEqual([join(dir, "CA-dup-2.wav"), join(dir, "CA-dup.wav")]);
    for (const [i, value] of [7, 9].entries()) {
      const { left } = splitStereo(parseWav(new Uint8Array(readFileSync(recs[i]!.path))).samples);
      expect(left.length).toBe(8000 * 2.5);
      expect(valuesIn(left, 0, left.length)).toEqual([value]);
    }
  });
});
