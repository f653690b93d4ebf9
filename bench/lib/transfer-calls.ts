// The calls of `bench transfer`. A warm transfer: the caller calls the bridge at a desk's number,
// waits for the greeting to end and presses 0 (the scripted agent asks for transfer_call); the
// bridge holds the caller and calls the person at that number through its outbound proxy, the
// persons' trunk (one SIP socket for every person); the person says "Hello?" (so answering-machine
// detection hears a person), listens to the brief and, once it is over, presses 1 and talks (its
// tone); the caller talks (its tone) from the first moment of hold. What is measured from what
// each one received: the largest gap in the hold audio at the caller until the press, and from the
// press to the first frame of the other's line at each end. An ordinary call: a caller speaking a
// phrase every 8 s, for the agent to answer.
import type { Heard } from "./transfer-party.ts";
import { RtpParty, TONE_HZ, tone } from "./transfer-party.ts";
import { pcmuSdp, type RemoteMedia, type SipCall, SipEndpoint } from "./transfer-sip.ts";

type Peer = { address: string; port: number };
const FRAME = 160;
const silentFrame = new Int16Array(FRAME);
const frameOf = (pcm: Int16Array, n: number) =>
  (n + 1) * FRAME <= pcm.length ? pcm.subarray(n * FRAME, (n + 1) * FRAME) : silentFrame;
/** One second of each line's tone: a whole number of cycles, so it loops without a seam. */
const CALLER_LINE = tone(TONE_HZ.caller, 1000);
const PERSON_LINE = tone(TONE_HZ.person, 1000);
const looped = (pcm: Int16Array, n: number) => frameOf(pcm, n % Math.floor(pcm.length / FRAME));

/** Quiet this long after a voice says the agent (greeting, brief) has finished, ms. */
const DONE_QUIET_MS = 800;
/** How long one transfer may take to be joined, ms. */
const JOIN_DEADLINE_MS = 90_000;

export interface TransferResult {
  number: string;
  joined: boolean;
  /** The last step reached, and why it went no further. */
  error?: string;
  /** The largest gap in the hold audio the caller received until the person's press, ms. */
  holdGapMs?: number;
  /** From the first frame of hold audio to the press, ms. */
  heldMs?: number;
  /** From the press to the first frame of the person's line at the caller, and the other way, ms. */
  callerHearsPersonMs?: number;
  personHearsCallerMs?: number;
}

/** A call under way: its result once joined (or failed), and its end. */
export interface BenchCall<R> {
  result: R;
  hangUp(): Promise<void>;
}

/** The persons' side: one SIP socket the bridge's outbound proxy names, answering by number. */
export class PersonsTrunk {
  readonly sip: SipEndpoint;
  readonly #desks = new Map<
    string,
    (remote: RemoteMedia) => Promise<{ sdp: string; call: (c: SipCall) => void }>
  >();

  private constructor(sip: SipEndpoint) {
    this.sip = sip;
    sip.onOffer = async ({ user, remote }) => this.#desks.get(user)?.(remote);
  }

  static async open(): Promise<PersonsTrunk> {
    return new PersonsTrunk(await SipEndpoint.open());
  }

  get port(): number {
    return this.sip.port;
  }

  desk(
    number: string,
    answer: (remote: RemoteMedia) => Promise<{ sdp: string; call: (c: SipCall) => void }>,
  ): void {
    this.#desks.set(number, answer);
  }

  close(): Promise<void> {
    return this.sip.close();
  }
}

/** Watches a party's incoming voice: `done` once a voice of at least `minVoiceMs` has been followed by quiet. */
class VoiceEnd {
  #voiceFrames = 0;
  #lastVoiceAt = Number.NaN;
  readonly minVoiceMs: number;
  constructor(minVoiceMs: number) {
    this.minVoiceMs = minVoiceMs;
  }
  heard(kind: Heard, at: number): void {
    if (kind !== "voice") return;
    this.#voiceFrames++;
    this.#lastVoiceAt = at;
  }
  done(now: number): boolean {
    return this.#voiceFrames * 20 >= this.minVoiceMs && now - this.#lastVoiceAt >= DONE_QUIET_MS;
  }
}

export interface TransferOptions {
  bridge: Peer;
  callers: SipEndpoint;
  persons: PersonsTrunk;
  /** The number dialled, which the agent transfers to ({{called}}). */
  number: string;
  /** What the person says on answering. */
  hello: Int16Array;
}

/** Runs one warm transfer until both parties hear each other (or it fails); resolves then. */
export async function transferCall(o: TransferOptions): Promise<BenchCall<TransferResult>> {
  const result: TransferResult = { number: o.number, joined: false };
  const caller = await RtpParty.open();
  let person: RtpParty | undefined;
  let personCall: SipCall | undefined;
  let step = "calling the bridge";
  const greeting = new VoiceEnd(300);
  const brief = new VoiceEnd(1000);
  let holdFrom = Number.NaN;
  let lastHold = Number.NaN;
  let holdGap = 0;
  let joined: () => void = () => {};
  const bothHear = new Promise<void>((r) => {
    joined = r;
  });
  const pressedAt = () => person?.pressedAt ?? Number.NaN;
  const check = () => {
    if (result.callerHearsPersonMs !== undefined && result.personHearsCallerMs !== undefined) joined();
  };

  caller.onHeard = (kind, at) => {
    greeting.heard(kind, at);
    const press = pressedAt();
    if (kind === "hold" && !(at >= press)) {
      if (Number.isNaN(holdFrom)) {
        holdFrom = at;
        if (step.startsWith("pressed 0")) step = "held; waiting for the person's call";
      } else holdGap = Math.max(holdGap, at - lastHold - 20);
      lastHold = at;
    }
    if (kind === "person" && at >= press && result.callerHearsPersonMs === undefined) {
      result.callerHearsPersonMs = at - press;
      check();
    }
  };

  o.persons.desk(o.number, async (remote) => {
    step = "the person's call came; waiting for the brief";
    person = await RtpParty.open();
    const p = person;
    const helloFrames = Math.floor(o.hello.length / FRAME);
    let pressed = false;
    p.onHeard = (kind, at) => {
      brief.heard(kind, at);
      if (kind === "caller" && at >= p.pressedAt && result.personHearsCallerMs === undefined) {
        result.personHearsCallerMs = at - p.pressedAt;
        check();
      }
    };
    return {
      sdp: pcmuSdp("127.0.0.1", p.port, remote.eventPt ?? 101),
      call: (c) => {
        personCall = c;
        // Once the brief is over (a voice, then quiet), the person takes the call.
        const watch = setInterval(() => {
          if (pressed || !brief.done(performance.now())) return;
          pressed = true;
          clearInterval(watch);
          step = "the person pressed 1; waiting for both to hear each other";
          p.press("1", remote.eventPt ?? 101);
        }, 20);
        void c.ended.then(() => clearInterval(watch));
        p.start(remote, (n) =>
          n < helloFrames ? frameOf(o.hello, n) : pressed ? looped(PERSON_LINE, n) : silentFrame,
        );
      },
    };
  });

  let callerCall: SipCall | undefined;
  let watch: NodeJS.Timeout | undefined;
  let deadline: NodeJS.Timeout | undefined;
  try {
    callerCall = await o.callers.invite(o.bridge, o.number, pcmuSdp("127.0.0.1", caller.port));
    const eventPt = callerCall.remote.eventPt;
    if (eventPt === undefined) throw new Error("the bridge's answer has no telephone-event");
    step = "waiting for the greeting to end";
    caller.start(callerCall.remote, (n) => (Number.isNaN(holdFrom) ? silentFrame : looped(CALLER_LINE, n)));
    let pressed = false;
    watch = setInterval(() => {
      if (pressed || !greeting.done(performance.now())) return;
      pressed = true;
      step = "pressed 0; waiting for the hold audio";
      caller.press("0", eventPt);
    }, 20);
    const outcome = await Promise.race([
      bothHear.then(() => "joined" as const),
      callerCall.ended.then(() => "the bridge hung up on the caller" as const),
      new Promise<"late">((r) => {
        deadline = setTimeout(() => r("late"), JOIN_DEADLINE_MS);
      }),
    ]);
    if (outcome !== "joined") throw new Error(outcome === "late" ? "timed out" : outcome);
    result.joined = true;
    const press = pressedAt();
    result.heldMs = press - holdFrom;
    // The hold audio runs until the press: quiet between the last of it and the press is a gap too.
    result.holdGapMs = Math.max(holdGap, press - lastHold - 20);
  } catch (err) {
    result.error = `${step}: ${(err as Error).message}`;
  } finally {
    clearInterval(watch);
    clearTimeout(deadline);
  }
  return {
    result,
    hangUp: async () => {
      await callerCall?.hangUp();
      // The bridge ends the person's call when the caller goes; if it does not, the person hangs up.
      if (personCall) {
        const gone = await Promise.race([
          personCall.ended.then(() => true),
          new Promise<false>((r) => setTimeout(() => r(false), 5000)),
        ]);
        if (!gone) await personCall.hangUp();
      }
      await Promise.all([caller.close(), person?.close()]);
    },
  };
}

/** An ordinary agent call: answered, the caller's `line` looped (a phrase now and then). */
export async function ordinaryCall(
  bridge: Peer,
  callers: SipEndpoint,
  number: string,
  line: Int16Array,
): Promise<BenchCall<{ number: string; error?: string }>> {
  const party = await RtpParty.open();
  let call: SipCall | undefined;
  const result: { number: string; error?: string } = { number };
  try {
    call = await callers.invite(bridge, number, pcmuSdp("127.0.0.1", party.port));
    party.start(call.remote, (n) => looped(line, n));
  } catch (err) {
    result.error = (err as Error).message;
  }
  return {
    result,
    hangUp: async () => {
      await call?.hangUp();
      await party.close();
    },
  };
}

/** The figures of a set of warm transfers (per-call maxima and medians; NaN where none joined). */
export function transferFigures(results: readonly TransferResult[]) {
  const joined = results.filter((r) => r.joined);
  const of = (f: (r: TransferResult) => number | undefined) =>
    joined.map(f).filter((v): v is number => v !== undefined);
  const both = joined.map((r) => Math.max(r.callerHearsPersonMs!, r.personHearsCallerMs!));
  return {
    transfers: results.length,
    joined: joined.length,
    holdGapsMs: of((r) => r.holdGapMs),
    heldMs: of((r) => r.heldMs),
    joinMs: both,
    callerHearsPersonMs: of((r) => r.callerHearsPersonMs),
    personHearsCallerMs: of((r) => r.personHearsCallerMs),
    failures: results.flatMap((r) => (r.error ? [`${r.number}: ${r.error}`] : [])),
  };
}
