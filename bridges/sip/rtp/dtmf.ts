// RFC 4733 telephone-events: one digit per key press. A sender repeats each event's packets
// (start, updates, and the end packet three times with one sequence number), all with the
// event's one timestamp and the marker on the first; so a digit is reported on the first packet
// of a new (SSRC, timestamp) whatever of those arrives, and never again for the same event.
// A very long press is split into segments with new timestamps and no marker (§2.5.1.5): a
// segment continuing an event that has not ended is not a new press.

const DIGITS = "0123456789*#ABCD";

export interface TelephoneEvent {
  /** Event code (0–15 are the DTMF digits 0-9, *, #, A-D). */
  event: number;
  end: boolean;
  volume: number;
  /** Duration so far, in RTP timestamp units. */
  duration: number;
}

/** The 4-byte event payload, or undefined when it is too short. */
export function parseTelephoneEvent(payload: Uint8Array): TelephoneEvent | undefined {
  if (payload.length < 4) return undefined;
  return {
    event: payload[0]!,
    end: (payload[1]! & 0x80) !== 0,
    volume: payload[1]! & 0x3f,
    duration: (payload[2]! << 8) | payload[3]!,
  };
}

/** The event payload a sender writes (for peers and tests). */
export function buildTelephoneEvent(e: TelephoneEvent): Uint8Array {
  return Uint8Array.of(
    e.event,
    (e.end ? 0x80 : 0) | (e.volume & 0x3f),
    (e.duration >> 8) & 0xff,
    e.duration & 0xff,
  );
}

export function dtmfDigit(event: number): string | undefined {
  return event < DIGITS.length ? DIGITS[event] : undefined;
}

export function dtmfEvent(digit: string): number {
  const code = DIGITS.indexOf(digit.toUpperCase());
  if (digit.length !== 1 || code < 0) throw new RangeError(`not a DTMF digit: ${JSON.stringify(digit)}`);
  return code;
}

export class DtmfDetector {
  #ssrc = -1;
  #timestamp = -1;
  #event = -1;
  #ended = true;
  /** Packets that carried no new press (repeats, end retransmissions, continuation segments). */
  repeats = 0;

  /** One telephone-event packet; returns the digit when it starts a new press. */
  packet(ssrc: number, timestamp: number, marker: boolean, payload: Uint8Array): string | undefined {
    const e = parseTelephoneEvent(payload);
    if (!e) return undefined;
    const same = ssrc === this.#ssrc && timestamp === this.#timestamp;
    if (same) {
      if (e.end) this.#ended = true;
      this.repeats++;
      return undefined;
    }
    const continuation = ssrc === this.#ssrc && !marker && !this.#ended && e.event === this.#event;
    this.#ssrc = ssrc;
    this.#timestamp = timestamp;
    this.#event = e.event;
    this.#ended = e.end;
    if (continuation) {
      this.repeats++;
      return undefined;
    }
    return dtmfDigit(e.event);
  }
}
