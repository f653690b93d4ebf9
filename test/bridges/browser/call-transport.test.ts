// The browser transport on virtual time, writing into an in-memory socket: pacing ahead of the
// page's playout, the playout position from the page's reports and its clear epochs, re-framing
// of the microphone's audio, keypad, hang-up and transfer; and the page's messages checked.
import { describe, expect, it } from "vitest";
import { BrowserCallTransport, type BrowserSocket } from "../../../bridges/browser/call-transport.ts";
import {
  BROWSER_RATE,
  type BrowserServerMessage,
  parseClientMessage,
} from "../../../bridges/browser/protocol.ts";
import { VirtualClock } from "../../../src/core/clock.ts";
import { silentLogger } from "../../../src/core/log.ts";
import type { TransportListener } from "../../../src/session/transport.ts";

class MemorySocket implements BrowserSocket {
  readonly audio: Int16Array[] = [];
  readonly messages: BrowserServerMessage[] = [];
  closed: { code: number; reason: string } | undefined;
  send(data: string | Uint8Array): void {
    if (typeof data === "string") this.messages.push(JSON.parse(data) as BrowserServerMessage);
    else this.audio.push(new Int16Array(data.slice().buffer));
  }
  close(code: number, reason: string): void {
    this.closed = { code, reason };
  }
  get sentMs(): number {
    return this.audio.reduce((n, a) => n + a.length, 0) / (BROWSER_RATE / 1000);
  }
}

function rig() {
  const clock = new VirtualClock();
  const socket = new MemorySocket();
  const t = new BrowserCallTransport({
    socket,
    callId: "BR0123",
    from: "browser 127.0.0.1",
    params: {},
    log: silentLogger,
    clock,
    leadMs: 200,
  });
  const heard = {
    frames: [] as Int16Array[],
    digits: [] as string[],
    played: [] as number[],
    ended: [] as string[],
  };
  const listener: TransportListener = {
    audio: (f) => heard.frames.push(f.slice()),
    dtmf: (d) => heard.digits.push(d),
    played: (ms) => heard.played.push(ms),
    ended: (r) => heard.ended.push(r),
  };
  t.attach(listener);
  return { clock, socket, t, heard };
}

const ms = (n: number) => new Int16Array((n * BROWSER_RATE) / 1000).fill(1000);

describe("BrowserCallTransport", () => {
  it("says it is ready, with the call's id and audio format", () => {
    const { t, socket } = rig();
    t.ready();
    expect(socket.messages).toEqual([{ type: "ready", callId: "BR0123", sampleRate: 16000, frameMs: 20 }]);
    expect(t.info).toMatchObject({ callId: "BR0123", transport: "browser", from: "browser 127.0.0.1" });
  });

  it("sends agent audio a lead ahead of the page's playout, then at the pace it plays", () => {
    const { t, socket, clock } = rig();
    t.play(ms(1000));
    expect(t.queuedMs()).toBe(1000);
    // At once: the lead (200 ms), in messages of whole frames.
    expect(socket.sentMs).toBe(200);
    clock.advance(500);
    // 500 ms later the page has played 500 ms: the bridge keeps it 100-200 ms ahead.
    expect(socket.sentMs).toBeGreaterThanOrEqual(600);
    expect(socket.sentMs).toBeLessThanOrEqual(700);
    clock.advance(1000);
    expect(socket.sentMs).toBe(1000);
    // Nothing is heard until the page says it played it.
    expect(t.playedMs()).toBe(0);
  });

  it("sends only real samples: a reply's last partial frame is not padded", () => {
    const { t, socket, clock } = rig();
    t.play(new Int16Array(330)); // one frame (320) and 10 samples
    clock.advance(100);
    expect(socket.audio.reduce((n, a) => n + a.length, 0)).toBe(330);
  });

  it("counts as heard what the page reports played, never more than was sent", () => {
    const { t, heard } = rig();
    t.play(ms(400));
    t.handleMessage({ type: "played", epoch: 0, ms: 120 });
    expect(t.playedMs()).toBe(120);
    expect(heard.played).toEqual([120]);
    // An older (smaller) report changes nothing; a report past the queue is capped at it.
    t.handleMessage({ type: "played", epoch: 0, ms: 100 });
    t.handleMessage({ type: "played", epoch: 0, ms: 900 });
    expect(t.playedMs()).toBe(400);
  });

  it("clear drops what the page has not played and opens a new epoch; older reports are ignored", () => {
    const { t, socket, clock } = rig();
    t.play(ms(1000));
    clock.advance(300);
    t.handleMessage({ type: "played", epoch: 0, ms: 250 });
    t.clear();
    expect(socket.messages.at(-1)).toEqual({ type: "clear", epoch: 1 });
    // Right after a clear, everything queued has been heard or dropped.
    expect(t.queuedMs()).toBe(250);
    expect(t.playedMs()).toBe(250);
    const sent = socket.sentMs;
    clock.advance(1000);
    expect(socket.sentMs).toBe(sent);
    // The page played a little more before the clear reached it: dropped audio, not heard.
    t.handleMessage({ type: "played", epoch: 0, ms: 290 });
    expect(t.playedMs()).toBe(250);
    // The next reply starts where the heard audio ended, and its playout counts from the epoch.
    t.play(ms(500));
    expect(t.queuedMs()).toBe(750);
    t.handleMessage({ type: "played", epoch: 1, ms: 100 });
    expect(t.playedMs()).toBe(350);
  });

  it("cuts the microphone's audio of any size into 20 ms frames", () => {
    const { t, heard } = rig();
    t.handleAudio(new Int16Array(500).fill(7));
    t.handleAudio(new Int16Array(460).fill(7));
    expect(heard.frames.map((f) => f.length)).toEqual([320, 320, 320]);
  });

  it("passes keypad digits on, and ends the call for the session when the page hangs up", () => {
    const { t, socket, heard } = rig();
    t.handleMessage({ type: "dtmf", digit: "5" });
    t.handleMessage({ type: "hangup" });
    expect(socket.closed).toEqual({ code: 1000, reason: "caller hung up" });
    t.handleEnd("browser call socket closed (1000)");
    expect(heard.digits).toEqual(["5"]);
    expect(heard.ended).toEqual(["caller hung up"]);
  });

  it("tells the page when the agent hangs up, and resolves once the socket has closed", async () => {
    const { t, socket, heard } = rig();
    let done = false;
    const hungUp = t.hangUp("caller said goodbye").then(() => {
      done = true;
    });
    expect(socket.messages.at(-1)).toEqual({ type: "hangup", reason: "caller said goodbye" });
    expect(socket.closed?.code).toBe(1000);
    await Promise.resolve();
    expect(done).toBe(false);
    t.handleEnd("caller hung up");
    await hungUp;
    expect(heard.ended).toEqual(["hang-up (caller said goodbye)"]);
  });

  it("refuses to transfer and to play Opus, saying why", async () => {
    const { t } = rig();
    await expect(t.transfer("+15550100")).rejects.toThrow(/browser call has no phone line/);
    expect(() => t.play({ packets: [] })).toThrow(/plays PCM/);
  });
});

describe("parseClientMessage", () => {
  it("reads the page's messages", () => {
    expect(parseClientMessage('{"type":"played","epoch":2,"ms":140.5}')).toEqual({
      ok: true,
      message: { type: "played", epoch: 2, ms: 140.5 },
    });
    expect(parseClientMessage('{"type":"dtmf","digit":"#"}')).toEqual({
      ok: true,
      message: { type: "dtmf", digit: "#" },
    });
    expect(parseClientMessage('{"type":"hangup"}')).toEqual({ ok: true, message: { type: "hangup" } });
  });

  it("names the field that is wrong and what it got", () => {
    const problem = (text: string) => {
      const r = parseClientMessage(text);
      return r.ok ? "" : r.problem;
    };
    expect(problem("{")).toMatch(/^not JSON/);
    expect(problem("[1]")).toMatch(/JSON object/);
    expect(problem('{"type":"played","epoch":-1,"ms":0}')).toBe(
      "played.epoch: expected a whole number ≥ 0, got -1",
    );
    expect(problem('{"type":"played","epoch":0}')).toBe(
      "played.ms: expected a number of ms ≥ 0, got undefined",
    );
    expect(problem('{"type":"dtmf","digit":"55"}')).toBe('dtmf.digit: expected one of 0-9 * # A-D, got "55"');
    expect(problem('{"type":"mute"}')).toBe('type: expected played, dtmf or hangup, got "mute"');
  });
});
