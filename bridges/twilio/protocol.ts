// Twilio Media Streams wire messages (bidirectional stream, `<Connect><Stream>`), as the
// published protocol defines them: JSON text frames with an `event` discriminator.
// From Twilio: connected, start, media, dtmf, mark, stop. To Twilio: media, mark, clear.
// Numbers Twilio counts with (sequenceNumber, chunk, timestamp) travel as strings.
// The bridge parses Twilio's side and builds its own; the call simulator and the tests' fakes, acting
// as Twilio, do the reverse. Media from Twilio is read in place from the message's bytes
// (scanTwilioMedia), its Base64 payload then decoded straight into the call's buffer: a string of
// the whole message, a substring and a Buffer.write per 20 ms frame made ~600 B of garbage per
// message. Anything else goes through the full parser.
import { Buffer } from "node:buffer";
import { isObject, type JsonObject } from "../../src/core/guards.ts";

export const MEDIA_FORMAT = { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 } as const;

export interface MediaFormat {
  encoding: string;
  sampleRate: number;
  channels: number;
}

export interface ConnectedMessage {
  event: "connected";
  protocol: string;
  version: string;
}

export interface StartMessage {
  event: "start";
  sequenceNumber: string;
  streamSid: string;
  start: {
    streamSid: string;
    accountSid: string;
    callSid: string;
    tracks: string[];
    customParameters: Record<string, string>;
    mediaFormat: MediaFormat;
  };
}

export interface MediaMessage {
  event: "media";
  sequenceNumber: string;
  streamSid: string;
  media: { track: string; chunk: string; timestamp: string; payload: string };
}

export interface DtmfMessage {
  event: "dtmf";
  sequenceNumber: string;
  streamSid: string;
  dtmf: { track: string; digit: string };
}

export interface MarkMessage {
  event: "mark";
  sequenceNumber: string;
  streamSid: string;
  mark: { name: string };
}

export interface StopMessage {
  event: "stop";
  sequenceNumber: string;
  streamSid: string;
  stop: { accountSid: string; callSid: string };
}

/** What Twilio sends to the application. */
export type TwilioMessage =
  | ConnectedMessage
  | StartMessage
  | MediaMessage
  | DtmfMessage
  | MarkMessage
  | StopMessage;

export interface OutboundMedia {
  event: "media";
  streamSid: string;
  media: { payload: string };
}

export interface OutboundMark {
  event: "mark";
  streamSid: string;
  mark: { name: string };
}

export interface OutboundClear {
  event: "clear";
  streamSid: string;
}

/** What the application sends to Twilio. */
export type AppMessage = OutboundMedia | OutboundMark | OutboundClear;

export type Parsed<T> = { ok: true; message: T } | { ok: false; reason: string };

const isStr = (v: unknown): v is string => typeof v === "string";

function parseJson(text: string): JsonObject | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return "not JSON";
  }
  if (!isObject(value) || !isStr(value.event)) return "not an object with an event";
  return value;
}

/** Missing or mistyped field of a Twilio message, or "" when it is well-formed. */
function twilioProblem(m: JsonObject): string {
  const ev = m.event as string;
  if (ev === "connected") return "";
  if (!isStr(m.sequenceNumber)) return `${ev}: sequenceNumber must be a string`;
  if (!isStr(m.streamSid)) return `${ev}: streamSid must be a string`;
  switch (ev) {
    case "start": {
      const s = m.start;
      if (!isObject(s)) return "start: missing start object";
      if (!isStr(s.streamSid) || !isStr(s.callSid) || !isStr(s.accountSid))
        return "start: streamSid, callSid and accountSid must be strings";
      if (!Array.isArray(s.tracks) || !s.tracks.every(isStr))
        return "start: tracks must be an array of strings";
      if (!isObject(s.mediaFormat)) return "start: missing mediaFormat";
      if (s.customParameters !== undefined && !isObject(s.customParameters))
        return "start: customParameters must be an object";
      return "";
    }
    case "media": {
      const md = m.media;
      if (!isObject(md) || !isStr(md.payload)) return "media: media.payload must be a string";
      return "";
    }
    case "dtmf":
      return isObject(m.dtmf) && isStr(m.dtmf.digit) ? "" : "dtmf: dtmf.digit must be a string";
    case "mark":
      return isObject(m.mark) && isStr(m.mark.name) ? "" : "mark: mark.name must be a string";
    case "stop":
      return isObject(m.stop) ? "" : "stop: missing stop object";
    default:
      return `unknown event ${JSON.stringify(ev)}`;
  }
}

/** What the transport needs of a `media` message. */
export interface MediaFields {
  track?: string | undefined;
  timestamp: string;
  payload: string;
}

/** Where the fields of one media message lie in its bytes (one reused object per connection). */
export interface MediaSpan {
  /** The Base64 payload is bytes [payloadStart, payloadEnd) of the message. */
  payloadStart: number;
  payloadEnd: number;
  /** media.timestamp, ms. */
  timestampMs: number;
  /** media.track is present, not empty and not "inbound" (the transport ignores such audio). */
  otherTrack: boolean;
}

export function mediaSpan(): MediaSpan {
  return { payloadStart: 0, payloadEnd: 0, timestampMs: 0, otherTrack: false };
}

const key = (s: string) => Buffer.from(s, "latin1");
const HEAD = key('{"event":"media"');
const PAYLOAD = key('"payload":"');
const TIMESTAMP = key('"timestamp":"');
const TRACK = key('"track":"');
const STREAM_SID = key('"streamSid":"');
const SEQUENCE = key('"sequenceNumber":"');
const INBOUND = key("inbound");
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const CLOSE_BRACE = 0x7d;

/** Start of the string value of `"key":"…"`, or -1 when the key is absent. */
function valueStart(msg: Buffer, k: Buffer): number {
  const at = msg.indexOf(k);
  return at < 0 ? -1 : at + k.length;
}

function hasValue(msg: Buffer, k: Buffer): boolean {
  const at = valueStart(msg, k);
  return at >= 0 && msg.indexOf(QUOTE, at) >= 0;
}

/**
 * Reads a `media` message in place, from the WebSocket's bytes: the hot path, 50 messages a second
 * per call. Fills `span` and returns true for a message in Twilio's plain form (no escapes, the
 * timestamp plain digits), with no string and no object tree made; returns false for anything
 * else, which then goes through parseTwilioMessage.
 */
export function scanTwilioMedia(msg: Buffer, span: MediaSpan): boolean {
  const n = msg.length;
  if (n < HEAD.length + 1 || msg[n - 1] !== CLOSE_BRACE) return false;
  for (let i = 0; i < HEAD.length; i++) if (msg[i] !== HEAD[i]) return false;
  // With no backslash every quote delimits a JSON string, so the keys found are keys.
  if (msg.indexOf(BACKSLASH) >= 0) return false;
  const payloadStart = valueStart(msg, PAYLOAD);
  const payloadEnd = payloadStart < 0 ? -1 : msg.indexOf(QUOTE, payloadStart);
  const tsStart = valueStart(msg, TIMESTAMP);
  const tsEnd = tsStart < 0 ? -1 : msg.indexOf(QUOTE, tsStart);
  if (payloadEnd < 0 || tsEnd < 0) return false;
  if (!hasValue(msg, STREAM_SID) || !hasValue(msg, SEQUENCE)) return false;
  // The timestamp as Number() reads it, when it is plain digits (Twilio's form).
  if (tsEnd === tsStart || tsEnd - tsStart > 15) return false;
  let ts = 0;
  for (let i = tsStart; i < tsEnd; i++) {
    const d = msg[i]! - 48;
    if (d < 0 || d > 9) return false;
    ts = ts * 10 + d;
  }
  let otherTrack = false;
  const trackStart = valueStart(msg, TRACK);
  if (trackStart >= 0) {
    const trackEnd = msg.indexOf(QUOTE, trackStart);
    if (trackEnd < 0) return false;
    otherTrack = trackEnd > trackStart && msg.compare(INBOUND, 0, INBOUND.length, trackStart, trackEnd) !== 0;
  }
  span.payloadStart = payloadStart;
  span.payloadEnd = payloadEnd;
  span.timestampMs = ts;
  span.otherTrack = otherTrack;
  return true;
}

/** Parses one text frame from Twilio. */
export function parseTwilioMessage(text: string): Parsed<TwilioMessage> {
  const m = parseJson(text);
  if (typeof m === "string") return { ok: false, reason: m };
  const problem = twilioProblem(m);
  if (problem) return { ok: false, reason: problem };
  if (m.event === "start") {
    const s = m.start as JsonObject;
    if (s.customParameters === undefined) s.customParameters = {};
  }
  return { ok: true, message: m as unknown as TwilioMessage };
}

/** Parses one text frame from the application (what the simulator, acting as Twilio, receives). */
export function parseAppMessage(text: string): Parsed<AppMessage> {
  const m = parseJson(text);
  if (typeof m === "string") return { ok: false, reason: m };
  if (!isStr(m.streamSid)) return { ok: false, reason: `${m.event}: streamSid must be a string` };
  switch (m.event) {
    case "media":
      return isObject(m.media) && isStr(m.media.payload)
        ? { ok: true, message: m as unknown as OutboundMedia }
        : { ok: false, reason: "media: media.payload must be a string" };
    case "mark":
      return isObject(m.mark) && isStr(m.mark.name)
        ? { ok: true, message: m as unknown as OutboundMark }
        : { ok: false, reason: "mark: mark.name must be a string" };
    case "clear":
      return { ok: true, message: m as unknown as OutboundClear };
    default:
      return { ok: false, reason: `unknown event ${JSON.stringify(m.event)}` };
  }
}

/**
 * Builds outbound frames for one stream. The streamSid is JSON-encoded once per call, so a
 * media frame is a single string concatenation of a base64 payload (which needs no escaping).
 */
export class AppMessageWriter {
  readonly #sid: string;

  constructor(streamSid: string) {
    this.#sid = JSON.stringify(streamSid);
  }

  media(payloadBase64: string): string {
    return `{"event":"media","streamSid":${this.#sid},"media":{"payload":"${payloadBase64}"}}`;
  }

  mark(name: string): string {
    return `{"event":"mark","streamSid":${this.#sid},"mark":{"name":${JSON.stringify(name)}}}`;
  }

  clear(): string {
    return `{"event":"clear","streamSid":${this.#sid}}`;
  }
}
