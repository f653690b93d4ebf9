// Twilio Conferences as far as the simulated calls need them (<Dial><Conference>): calls that name
// the same room hear each other — each one the mix of the others, 20 ms frame by frame on its own
// clock — once the conference has started (a participant with startConferenceOnEnter came in; those
// waiting before hear silence here, where Twilio plays its hold music). A participant leaving with
// endConferenceOnExit ends it for everyone; a call whose conference ended has no TwiML left after
// its <Dial> and hangs up. The REST fakes seat the calls (rest-api.ts, the tests' FakeTwilio).
import type { ConferenceInstruction } from "./twiml-read.ts";

const FRAME = 160;
/** Frames a participant's audio may wait for a listener's clock before the oldest is dropped. */
const MAX_QUEUED = 25;
/** A line's hiss below this is silence to a simulated listener waiting for the other to stop (~-54 dBFS). */
const SILENT = 64;

interface Room {
  readonly seats: Set<ConferenceSeat>;
  started: boolean;
}

/** Why a call left its conference. */
export type LeftBecause = "hung-up" | "conference-ended";

export class ConferenceSeat {
  readonly callSid: string;
  readonly conference: ConferenceInstruction;
  readonly #room: Room;
  readonly #left = new AbortController();
  /** The others' frames waiting for this seat's clock, per speaker. */
  readonly #inbox = new Map<ConferenceSeat, Int16Array[]>();
  readonly #mix = new Int32Array(FRAME);
  #audibleFrames = 0;

  constructor(callSid: string, conference: ConferenceInstruction, room: Room) {
    this.callSid = callSid;
    this.conference = conference;
    this.#room = room;
  }

  /** Aborted, its reason a LeftBecause, once the call is out of the conference. */
  get left(): AbortSignal {
    return this.#left.signal;
  }

  /** Frames this participant heard that were not silence. */
  get audibleFrames(): number {
    return this.#audibleFrames;
  }

  /** 20 ms of this participant's line, to the others. */
  say(frame: Int16Array): void {
    if (this.#left.signal.aborted || !this.#room.started) return;
    for (const other of this.#room.seats) {
      if (other === this) continue;
      const queue = other.#inbox.get(this) ?? [];
      if (queue.length >= MAX_QUEUED) queue.shift();
      queue.push(frame.slice(0, FRAME));
      other.#inbox.set(this, queue);
    }
  }

  /** 20 ms of what this participant hears: the others' next frames, mixed; false when that is silence. */
  hear(out: Int16Array): boolean {
    let heard = false;
    const mix = this.#mix;
    mix.fill(0);
    for (const [speaker, queue] of this.#inbox) {
      const frame = queue.shift();
      if (frame) for (let i = 0; i < frame.length; i++) mix[i] = mix[i]! + frame[i]!;
      if (queue.length === 0 && !this.#room.seats.has(speaker)) this.#inbox.delete(speaker);
    }
    for (let i = 0; i < out.length; i++) {
      const v = i < FRAME ? Math.max(-32768, Math.min(32767, mix[i]!)) : 0;
      out[i] = v;
      if (v > SILENT || v < -SILENT) heard = true;
    }
    if (heard) this.#audibleFrames++;
    return heard;
  }

  /** The call hangs up: it leaves, ending the conference if it was to end on its exit. */
  hangUp(): void {
    this.#leave("hung-up");
  }

  #leave(because: LeftBecause): void {
    if (this.#left.signal.aborted) return;
    this.#room.seats.delete(this);
    this.#left.abort(because);
    if (this.conference.endConferenceOnExit)
      for (const other of [...this.#room.seats]) other.#leave("conference-ended");
  }
}

export class ConferenceHub {
  readonly #rooms = new Map<string, Room>();

  /** The call `callSid` comes into conference `conference.name` (new TwiML with <Dial><Conference>). */
  join(callSid: string, conference: ConferenceInstruction): ConferenceSeat {
    let room = this.#rooms.get(conference.name);
    if (!room || room.seats.size === 0) {
      room = { seats: new Set(), started: false };
      this.#rooms.set(conference.name, room);
    }
    const seat = new ConferenceSeat(callSid, conference, room);
    room.seats.add(seat);
    if (conference.startConferenceOnEnter) room.started = true;
    return seat;
  }

  /** Where the call `callSid` is now, if in a conference. */
  seat(callSid: string): ConferenceSeat | undefined {
    for (const room of this.#rooms.values())
      for (const seat of room.seats) if (seat.callSid === callSid) return seat;
    return undefined;
  }

  /** The calls in conference `name` now. */
  participants(name: string): string[] {
    return [...(this.#rooms.get(name)?.seats ?? [])].map((s) => s.callSid);
  }
}
