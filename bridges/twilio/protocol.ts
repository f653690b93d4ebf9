// Twilio Media Streams wire messages (bidirectional stream, `<Connect><Stream>`), as the
// published protocol defines them: JSON text frames with an `event` discriminator.
// From Twilio: connected, start, media, dtmf, mark, stop. To Twilio: media, mark, clear.
// Numbers Twilio counts with (sequenceNumber, chunk, timestamp) travel as strings.
// The bridge parses Twilio's side and builds its own; the call simulator does the reverse.

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

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const isStr = (v: unknown): v is string => typeof v === "string";

function parseJson(text: string): Obj | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return "not JSON";
  }
  if (!isObj(value) || !isStr(value.event)) return "not an object with an event";
  return value;
}

/** Missing or mistyped field of a Twilio message, or "" when it is well-formed. */
function twilioProblem(m: Obj): string {
  const ev = m.event as string;
  if (ev === "connected") return "";
  if (!isStr(m.sequenceNumber)) return `${ev}: sequenceNumber must be a string`;
  if (!isStr(m.streamSid)) return `${ev}: streamSid must be a string`;
  switch (ev) {
    case "start": {
      const s = m.start;
      if (!isObj(s)) return "start: missing start object";
      if (!isStr(s.streamSid) || !isStr(s.callSid) || !isStr(s.accountSid))
        return "start: streamSid, callSid and accountSid must be strings";
      if (!Array.isArray(s.tracks) || !s.tracks.every(isStr))
        return "start: tracks must be an array of strings";
      if (!isObj(s.mediaFormat)) return "start: missing mediaFormat";
      if (s.customParameters !== undefined && !isObj(s.customParameters))
        return "start: customParameters must be an object";
      return "";
    }
    case "media": {
      const md = m.media;
      if (!isObj(md) || !isStr(md.payload)) return "media: media.payload must be a string";
      return "";
    }
    case "dtmf":
      return isObj(m.dtmf) && isStr(m.dtmf.digit) ? "" : "dtmf: dtmf.digit must be a string";
    case "mark":
      return isObj(m.mark) && isStr(m.mark.name) ? "" : "mark: mark.name must be a string";
    case "stop":
      return isObj(m.stop) ? "" : "stop: missing stop object";
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

/** The string value of `"key":"…"` in `text`, or undefined (text must hold no escapes). */
function stringField(text: string, key: string): string | undefined {
  const at = text.indexOf(key);
  if (at < 0) return undefined;
  const from = at + key.length;
  const end = text.indexOf('"', from);
  return end < 0 ? undefined : text.slice(from, end);
}

/**
 * Reads a `media` message without building its object tree: the hot path, 50 messages a second
 * per call. With no backslash in the text every quote is a JSON string delimiter, so the keys
 * found are keys. Anything unusual returns undefined and goes through parseTwilioMessage.
 */
export function scanTwilioMedia(text: string): MediaFields | undefined {
  if (!text.startsWith('{"event":"media"') || text.charCodeAt(text.length - 1) !== 125 /* } */) return;
  if (text.includes("\\")) return;
  const payload = stringField(text, '"payload":"');
  const timestamp = stringField(text, '"timestamp":"');
  if (payload === undefined || timestamp === undefined) return;
  if (
    stringField(text, '"streamSid":"') === undefined ||
    stringField(text, '"sequenceNumber":"') === undefined
  )
    return;
  return { track: stringField(text, '"track":"'), timestamp, payload };
}

/** Parses one text frame from Twilio. */
export function parseTwilioMessage(text: string): Parsed<TwilioMessage> {
  const m = parseJson(text);
  if (typeof m === "string") return { ok: false, reason: m };
  const problem = twilioProblem(m);
  if (problem) return { ok: false, reason: problem };
  if (m.event === "start") {
    const s = m.start as Obj;
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
      return isObj(m.media) && isStr(m.media.payload)
        ? { ok: true, message: m as unknown as OutboundMedia }
        : { ok: false, reason: "media: media.payload must be a string" };
    case "mark":
      return isObj(m.mark) && isStr(m.mark.name)
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
