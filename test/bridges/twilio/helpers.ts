// Test rig: the real Twilio routes on a real fastify server, a recording session, and a raw
// WebSocket client that speaks Twilio's side of the Media Streams protocol message by message.
import { createHmac } from "node:crypto";
import Fastify, { type FastifyInstance } from "fastify";
import { WebSocket } from "ws";
import type { CallTransport, TransportListener } from "../../../bridges/transport.ts";
import { type CallControl, registerTwilio, type TwilioRoutes } from "../../../bridges/twilio/index.ts";
import { type AppMessage, parseAppMessage } from "../../../bridges/twilio/protocol.ts";
import { levelDbfs } from "../../../codecs/pcm.ts";
import type { Clock } from "../../../src/core/clock.ts";
import { silentLogger } from "../../../src/core/log.ts";

export const AUTH_TOKEN = "12345678901234567890123456789012";
export const ACCOUNT_SID = `AC${"a".repeat(32)}`;

/** X-Twilio-Signature as Twilio documents it, computed here without the twilio helper. */
export function sign(token: string, url: string, params: Record<string, string> = {}): string {
  const data = Object.keys(params)
    .sort()
    .reduce((acc, k) => acc + k + params[k], url);
  return createHmac("sha1", token).update(data, "utf8").digest("base64");
}

export interface RecordedCall {
  transport: CallTransport;
  frames: Int16Array[];
  digits: string[];
  played: number[];
  ended: string[];
}

export interface Rig {
  http: FastifyInstance;
  base: string;
  wsUrl: string;
  routes: TwilioRoutes;
  calls: RecordedCall[];
  close(): Promise<void>;
}

export interface RigOptions {
  authToken?: string;
  accountSid?: string;
  clock?: Clock;
  callControl?: CallControl;
  /** Attach later (default: at once, inside onCall). */
  attach?: boolean;
  onCall?: (call: RecordedCall) => void;
  /** Extra routes on the same server (before it listens). */
  routes?: (http: FastifyInstance) => void;
}

export function recorder(): { listener: TransportListener; rec: Omit<RecordedCall, "transport"> } {
  const rec = {
    frames: [] as Int16Array[],
    digits: [] as string[],
    played: [] as number[],
    ended: [] as string[],
  };
  return {
    rec,
    listener: {
      audio: (f) => rec.frames.push(f.slice()),
      dtmf: (d) => rec.digits.push(d),
      played: (ms) => rec.played.push(ms),
      ended: (r) => rec.ended.push(r),
    },
  };
}

export async function startRig(opts: RigOptions = {}): Promise<Rig> {
  const http = Fastify();
  const calls: RecordedCall[] = [];
  const routes = registerTwilio(http, {
    settings: { authToken: opts.authToken, accountSid: opts.accountSid },
    log: silentLogger,
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.callControl ? { callControl: opts.callControl } : {}),
    onCall(transport) {
      const { listener, rec } = recorder();
      const call = { transport, ...rec };
      calls.push(call);
      if (opts.attach !== false) transport.attach(listener);
      opts.onCall?.(call);
    },
  });
  opts.routes?.(http);
  const address = await http.listen({ host: "127.0.0.1", port: 0 });
  return {
    http,
    base: address,
    wsUrl: `${address.replace("http:", "ws:")}/twilio/media`,
    routes,
    calls,
    close: () => http.close(),
  };
}

type Json = Record<string, unknown>;

/** Twilio's end of one media stream, driven message by message. */
export class StreamClient {
  readonly ws: WebSocket;
  /** The bridge's messages, read by the parser the simulator uses (a malformed one throws). */
  readonly received: AppMessage[] = [];
  closed: { code: number } | null = null;
  #seq = 0;
  #chunk = 0;
  readonly streamSid: string;
  readonly callSid: string;

  constructor(ws: WebSocket, callSid = "CA0001", streamSid = "MZ0001") {
    this.ws = ws;
    this.callSid = callSid;
    this.streamSid = streamSid;
    ws.on("message", (d) => {
      const parsed = parseAppMessage(d.toString());
      if (!parsed.ok) throw new Error(`the bridge sent a malformed message: ${parsed.reason}`);
      this.received.push(parsed.message);
    });
    ws.on("close", (code) => {
      this.closed = { code };
    });
  }

  static async open(url: string, headers: Record<string, string> = {}): Promise<StreamClient> {
    const ws = new WebSocket(url, { headers });
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("unexpected-response", (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      ws.once("error", reject);
    });
    return new StreamClient(ws);
  }

  send(msg: Json): void {
    this.ws.send(JSON.stringify(msg));
  }

  #next(): string {
    return String(++this.#seq);
  }

  connected(): void {
    this.send({ event: "connected", protocol: "Call", version: "1.0.0" });
  }

  start(customParameters: Record<string, string> = {}): void {
    this.send({
      event: "start",
      sequenceNumber: this.#next(),
      start: {
        accountSid: ACCOUNT_SID,
        streamSid: this.streamSid,
        callSid: this.callSid,
        tracks: ["inbound"],
        mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 },
        customParameters,
      },
      streamSid: this.streamSid,
    });
  }

  media(bytes: Uint8Array): void {
    const chunk = ++this.#chunk;
    this.send({
      event: "media",
      sequenceNumber: this.#next(),
      media: {
        track: "inbound",
        chunk: String(chunk),
        timestamp: String((chunk - 1) * 20),
        payload: Buffer.from(bytes).toString("base64"),
      },
      streamSid: this.streamSid,
    });
  }

  dtmf(digit: string): void {
    this.send({
      event: "dtmf",
      streamSid: this.streamSid,
      sequenceNumber: this.#next(),
      dtmf: { track: "inbound_track", digit },
    });
  }

  mark(name: string): void {
    this.send({ event: "mark", sequenceNumber: this.#next(), streamSid: this.streamSid, mark: { name } });
  }

  stop(): void {
    this.send({
      event: "stop",
      sequenceNumber: this.#next(),
      streamSid: this.streamSid,
      stop: { accountSid: ACCOUNT_SID, callSid: this.callSid },
    });
  }

  of<E extends AppMessage["event"]>(event: E): Extract<AppMessage, { event: E }>[] {
    return this.received.filter((m): m is Extract<AppMessage, { event: E }> => m.event === event);
  }
}

/** Sine tone, Int16 at 8 kHz. */
export function tone(ms: number, hz = 440, amplitude = 8000, rate = 8000): Int16Array {
  const n = Math.round((ms * rate) / 1000);
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate));
  return out;
}

/**
 * A tiny agent on a transport: greets; on caller speech clears what is unheard; 300 ms after the
 * caller stops, replies. Returns what the transport reported to it.
 */
export function scriptedAgent(
  transport: CallTransport,
  script: { greeting: Int16Array; reply: Int16Array },
): Omit<RecordedCall, "transport"> {
  const { listener, rec } = recorder();
  let speaking = false;
  let silentFrames = 0;
  transport.attach({
    ...listener,
    audio(frame) {
      listener.audio(frame);
      const loud = levelDbfs(frame) > -40;
      if (loud && !speaking) {
        speaking = true;
        if (transport.queuedMs() > transport.playedMs()) transport.clear();
      }
      silentFrames = loud ? 0 : silentFrames + 1;
      if (speaking && silentFrames === 15) {
        speaking = false;
        transport.play(script.reply);
      }
    },
  });
  transport.play(script.greeting);
  return rec;
}

/** Where `seq` occurs whole in `pcm` at or after `from`, or -1. */
export function find(pcm: Int16Array, seq: Int16Array, from = 0): number {
  outer: for (let i = from; i + seq.length <= pcm.length; i++) {
    for (let j = 0; j < seq.length; j++) if (pcm[i + j] !== seq[j]) continue outer;
    return i;
  }
  return -1;
}

/** A Twilio `media` message as it comes off the socket; `body` overrides or removes its fields. */
export const mediaMessage = (body: Record<string, unknown> = {}): string =>
  JSON.stringify({
    event: "media",
    sequenceNumber: "3",
    media: { track: "inbound", chunk: "1", timestamp: "5", payload: "no+JhoaJjpzSHxAKBgYJDhwc" },
    streamSid: "MZ18ad3ab5a668481ce02b83e7395059f0",
    ...body,
  });
