// The agent's keypad digits as RFC 4733 telephone-events on the call's own RTP stream (same SSRC,
// same sequence numbers and clock as its voice, so a receiver's jitter buffer sees one timeline).
// One digit is a packet per 20 ms in place of the voice: each carries the event's start timestamp
// and its duration so far, the first the marker; then the end packet three times (§2.5.1.4), so
// a lost one does not lose the end. Every packet takes the next sequence number, as any RTP packet
// does (RFC 3550; some senders repeat the end's): a receiver knows one press by its (SSRC,
// timestamp), as dtmf.ts does. The send thread (native/rtp/sender.c) writes the headers: this
// makes the payloads and says which slots are events (EV_EVENT | payload type, EV_START first).
import { buildTelephoneEvent, dtmfEvent } from "./dtmf.ts";

/** Marks a queued slot as a telephone-event packet (with its payload type in the low 7 bits). */
export const EV_EVENT = 0x100;
/** The first packet of an event: the marker, and the timestamp its packets keep. */
export const EV_START = 0x200;

/** Times the end packet is sent (RFC 4733 §2.5.1.4). */
export const END_REPEATS = 3;
/** Volume field: the tone's power as −dBm0 (DTMF is sent at −7 to −9 dBm0; 10 is what phones send). */
export const EVENT_VOLUME = 10;
const PACKET_MS = 20;

/** Packets one digit of `toneMs` takes: one per 20 ms of tone, then the end's repeats. */
export function eventPacketCount(toneMs: number): number {
  return Math.max(1, Math.ceil(toneMs / PACKET_MS)) + END_REPEATS;
}

export interface EventPackets {
  /** The 4-byte payloads back to back. */
  readonly payloads: Buffer;
  /** Each payload's length (4). */
  readonly lengths: Uint16Array;
  /** Each slot's event marking for the send thread. */
  readonly events: Uint16Array;
}

/**
 * One digit's packets: `ticks` RTP clock ticks per 20 ms packet (160 at 8 kHz, 960 for Opus at
 * 48 kHz: the event's clock is the stream's), `payloadType` the telephone-event type the SDP agreed.
 */
export function telephoneEventPackets(
  digit: string,
  toneMs: number,
  ticks: number,
  payloadType: number,
): EventPackets {
  const event = dtmfEvent(digit);
  const updates = Math.max(1, Math.ceil(toneMs / PACKET_MS));
  // The duration field is 16 bits: a tone longer than that would need segments (§2.5.1.5).
  if (updates * ticks > 0xffff) throw new RangeError(`a DTMF tone of ${toneMs} ms is too long for one event`);
  const n = updates + END_REPEATS;
  const payloads = Buffer.alloc(n * 4);
  for (let i = 0; i < n; i++) {
    const end = i >= updates;
    const duration = (end ? updates : i + 1) * ticks;
    payloads.set(buildTelephoneEvent({ event, end, volume: EVENT_VOLUME, duration }), i * 4);
  }
  const events = new Uint16Array(n).fill(EV_EVENT | (payloadType & 0x7f));
  events[0] = EV_EVENT | EV_START | (payloadType & 0x7f);
  return { payloads, lengths: new Uint16Array(n).fill(4), events };
}
