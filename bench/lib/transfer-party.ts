// One party's media in `bench transfer` (a caller or a person): PCMU RTP at 20 ms from whatever its
// script says now (paced from the monotonic clock with catch-up), a keypad press as RFC 4733
// events in the same stream (the event replaces the audio while it lasts, as a phone's does), and
// every packet it receives told apart by what it carries: quiet, the hold audio, the caller's or
// the person's line (each a steady tone of its own), or a voice (the agent's). Arrivals are the
// kernel's receive stamps (as in sip-call-media.ts), so the bench's own loop delays do not count.
import { randomBytes } from "node:crypto";
import type dgram from "node:dgram";
import { dtmfEvent } from "../../bridges/sip/rtp/dtmf.ts";
import { rtpSender } from "../../bridges/sip/rtp/native-sender.ts";
import { bindRtpSocket } from "../../bridges/sip/rtp/port-pool.ts";
import { buildRtp, emptyRtpHeader, parseRtp } from "../../bridges/sip/rtp/rtp-packet.ts";
import { mulawDecode, mulawEncode } from "../../codecs/g711.ts";
import { toneShare as toneShareAt } from "../../codecs/tone.ts";
import { performanceMsOf } from "./monotonic-clock.ts";

export type Heard = "quiet" | "hold" | "caller" | "person" | "voice";

/** Each line's tone, Hz: whole cycles in a 20 ms frame, so one frame's Goertzel sees it whole. */
export const TONE_HZ = { hold: 400, caller: 1000, person: 1600 } as const;
const RATE = 8000;
const FRAME = 160;

/** `ms` of a steady tone at `hz` (about -14 dBFS). */
export function tone(hz: number, ms: number, amp = 6000): Int16Array {
  const out = new Int16Array(Math.round((ms * RATE) / 1000));
  for (let i = 0; i < out.length; i++) out[i] = Math.round(amp * Math.sin((2 * Math.PI * hz * i) / RATE));
  return out;
}

const toneShare = (pcm: Int16Array, hz: number) => toneShareAt(pcm, hz, RATE);

/** What one 20 ms frame carries. */
export function classify(pcm: Int16Array): Heard {
  let sum = 0;
  for (const v of pcm) sum += v * v;
  if (Math.sqrt(sum / pcm.length) < 150) return "quiet";
  for (const kind of ["hold", "caller", "person"] as const)
    if (toneShare(pcm, TONE_HZ[kind]) > 0.7) return kind;
  return "voice";
}

export class RtpParty {
  readonly #socket: dgram.Socket;
  readonly #fd: number;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #pending: { event: number; eventPt: number } | undefined;
  /** performance.now() of the first packet of the last key press (NaN before one). */
  pressedAt = Number.NaN;
  /** Each frame received: what it carries and its arrival (performance.now() time base). */
  onHeard: (kind: Heard, atMs: number) => void = () => {};

  private constructor(socket: dgram.Socket, fd: number) {
    this.#socket = socket;
    this.#fd = fd;
    const addon = rtpSender();
    addon.rxStampMs(fd); // turns the socket's receive stamps on
    const h = emptyRtpHeader();
    const pcm = new Int16Array(FRAME);
    socket.on("message", (msg) => {
      const read = performance.now();
      if (parseRtp(msg, h) || h.payloadType !== 0 || h.payloadEnd - h.payloadStart !== FRAME) return;
      const stamped = performanceMsOf(addon.rxStampMs(this.#fd));
      mulawDecode(msg.subarray(h.payloadStart, h.payloadEnd), pcm);
      this.onHeard(classify(pcm), Number.isNaN(stamped) ? read : stamped);
    });
  }

  static async open(local = "127.0.0.1"): Promise<RtpParty> {
    const b = await bindRtpSocket(local, 0);
    return new RtpParty(b.socket, b.fd);
  }

  get port(): number {
    return this.#socket.address().port;
  }

  /** Keypad `digit` as RFC 4733 events on payload type `eventPt`, from the next frame on. */
  press(digit: string, eventPt: number): void {
    this.#pending = { event: dtmfEvent(digit), eventPt };
  }

  /** Sends frame n (20 ms each, from now) as `source(n)` says, to `to`, until stop(). */
  start(to: { address: string; port: number }, source: (n: number) => Int16Array): void {
    const t0 = performance.now();
    const ssrc = randomBytes(4).readUInt32BE(0);
    let seq = randomBytes(2).readUInt16BE(0);
    const ts0 = randomBytes(4).readUInt32BE(0);
    const payload = new Uint8Array(FRAME);
    const send = (packet: Uint8Array) => this.#socket.send(packet, to.port, to.address);
    /** A press under way: its timestamp and the frames it has covered. */
    let press: { event: number; eventPt: number; ts: number; frames: number } | undefined;
    let n = 0;
    const pump = () => {
      this.#timer = undefined;
      if (this.#stopped) return;
      const due = Math.floor((performance.now() - t0) / 20) + 1;
      for (; n < due; n++) {
        const ts = (ts0 + n * FRAME) >>> 0;
        if (!press && this.#pending) {
          press = { ...this.#pending, ts, frames: 0 };
          this.#pending = undefined;
        }
        if (press) {
          // Two frames long: the start (marker), then the end, sent three times (RFC 4733 §2.5.1.4).
          press.frames++;
          const end = press.frames === 2;
          const body = Uint8Array.of(press.event, (end ? 0x80 : 0) | 10, 0, 0);
          new DataView(body.buffer).setUint16(2, press.frames * FRAME);
          const packet = buildRtp({
            payloadType: press.eventPt,
            sequence: seq++ & 0xffff,
            timestamp: press.ts,
            ssrc,
            payload: body,
            marker: press.frames === 1,
          });
          for (let k = 0; k < (end ? 3 : 1); k++) send(packet);
          if (press.frames === 1) this.pressedAt = performance.now();
          if (end) press = undefined;
          continue;
        }
        mulawEncode(source(n), payload);
        send(
          buildRtp({
            payloadType: 0,
            sequence: seq++ & 0xffff,
            timestamp: ts,
            ssrc,
            payload,
            marker: n === 0,
          }),
        );
      }
      this.#timer = setTimeout(pump, Math.max(0, t0 + n * 20 - performance.now()));
    };
    pump();
  }

  async close(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await new Promise<void>((r) => this.#socket.close(() => r()));
  }
}
