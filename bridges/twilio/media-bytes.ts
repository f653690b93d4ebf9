// Twilio `media` messages read from the WebSocket's bytes, with no string: the hot path, 50
// messages a second per call. scanTwilioMediaBytes() accepts exactly the messages
// scanTwilioMedia() (protocol.ts) accepts from the same text, minus any whose timestamp is not
// plain digits; whatever it does not accept goes through the text path as before.
import { Buffer } from "node:buffer";

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

/** Fills `span` from a media message and returns true, or returns false (use the text path). */
export function scanTwilioMediaBytes(msg: Buffer, span: MediaSpan): boolean {
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
