// The media stream of one simulated call, once its WebSocket is open: Twilio's end of it, frame by
// frame on the call's clock. Out: connected/start, the caller's audio as real-time 20 ms µ-law
// media (silence included, as a live line sends), DTMF, and stop. In: the agent's audio, played on
// a virtual line in real time, with marks echoed as their audio finishes and `clear` honoured.
// Caller audio is a fixed timeline and/or reactive turns (speech, or keys pressed), each taken once
// the agent has replied and then been silent for a moment, the way a caller waits.
import { WebSocket } from "ws";
import { MEDIA_FORMAT, parseAppMessage } from "../../bridges/twilio/protocol.ts";
import { DtmfToneDetector } from "../../codecs/dtmf-detector.ts";
import { mulawDecode, mulawEncode } from "../../codecs/g711.ts";
import { resample } from "../../codecs/resample.ts";
import type { Clock, TimerHandle } from "../../src/core/clock.ts";
import { CallerTimeline } from "./caller-timeline.ts";
import { ConferenceSeat } from "./conference.ts";
import { PlayoutLine } from "./playout.ts";
import { Recording } from "./recording.ts";
import type {
  SimAudio,
  SimEvent,
  SimKeys,
  SimMark,
  SimResult,
  SimTurn,
  SimulateCallOptions,
} from "./simulate.ts";
import { type Utterance, UtteranceSegmenter } from "./utterances.ts";

const RATE = 8000;
const FRAME = 160;
const FRAME_MS = 20;
/** Frames of agent audibility kept without `keep`: the last 10 s (what the hang-up and barge-in checks look back over). */
const AUDIBLE_RING = 512;

export interface StreamIds {
  callSid: string;
  accountSid: string;
  streamSid: string;
}

/** What the stream measured, the call's result from its duration on. */
export type StreamOutcome = Omit<
  SimResult,
  "callSid" | "streamSid" | "accountSid" | "streamUrl" | "parameters"
>;

function to8k(a: SimAudio): Int16Array {
  return a.rate === RATE ? a.samples : resample(a.samples, a.rate, RATE);
}

const frames = (ms: number) => Math.max(1, Math.round(ms / FRAME_MS));
/** Frames between two keys of a keypad turn (100 ms: a quick but human hand). */
const KEY_GAP = 5;

function keysOf(turn: SimKeys): string {
  if (!/^[0-9*#A-D]+$/i.test(turn.keys))
    throw new Error(`keypad turn "${turn.keys}": expected digits 0-9, *, # or A-D`);
  return turn.keys.toUpperCase();
}

export class SimulatedStream {
  readonly #ws: WebSocket;
  readonly #opts: SimulateCallOptions;
  readonly #clock: Clock;
  readonly #ids: StreamIds;
  readonly #keep: boolean;
  readonly #maxFrames: number;
  readonly #replyGap: number;
  readonly #noReply: number;
  readonly #hangUpAfter: number;

  // The caller's side.
  readonly #caller: CallerTimeline;
  readonly #says: Array<
    { pcm: Int16Array; label: string | undefined } | { keys: string; label: string | undefined }
  >;
  readonly #dtmf: Array<{ digit: string; atMs: number }>;
  readonly #segmenter: UtteranceSegmenter;
  readonly #callerRec: Recording;
  readonly #callerFrame = new Int16Array(FRAME);
  #say: { pcm: Int16Array; pos: number; label: string | undefined; start: number } | null = null;
  /** A keypad turn being pressed: its digits, the next one's index, and the frame it is due. */
  #keys: { digits: string; pos: number; due: number } | null = null;
  #nextSay = 0;
  #nextDtmf = 0;
  #lastCallerActivity = -1;
  readonly #sayspans: Array<{ start: number; end: number; label: string | undefined }> = [];
  readonly #utterances: Array<Utterance & { bargeIn: boolean }> = [];
  #mediaSent = 0;

  // The agent's side.
  readonly #playout = new PlayoutLine();
  readonly #agentRec: Recording;
  readonly #agentFrame = new Int16Array(FRAME);
  /** Keys the agent pressed, heard as tones in its audio (Media Streams carries no digits out). */
  readonly #agentKeyDetector = new DtmfToneDetector(RATE);
  readonly #agentKeys: Array<{ digit: string; atMs: number }> = [];
  /** Whether agent audio played in frame k: kept whole for the turns' report, or a ring without `keep`. */
  readonly #agentAudible: boolean[] = [];
  #lastAgentFrame = -1;
  readonly #marks: SimMark[] = [];
  readonly #pendingMarks = new Map<string, number>();
  readonly #clears: number[] = [];
  readonly #receipts: number[] = [];
  #mediaReceived = 0;
  #lastReceiptMs = Number.NEGATIVE_INFINITY;

  // The frame clock.
  #seq = 0;
  #t0 = 0;
  #k = 0;
  #timer: TimerHandle | undefined;
  #endedBy: SimResult["endedBy"] | null = null;
  /** The conference the call is in, once new TwiML moved it there (its stream stopped). */
  #seat: ConferenceSeat | undefined;
  #conferenceAtMs = 0;
  /** The timeline position of the first frame the conference played (SimulatedCall.conference). */
  #conferenceFromMs = 0;
  #resolveDone: () => void = () => {};
  readonly #done = new Promise<void>((r) => {
    this.#resolveDone = r;
  });

  constructor(ws: WebSocket, opts: SimulateCallOptions, clock: Clock, ids: StreamIds) {
    this.#ws = ws;
    this.#opts = opts;
    this.#clock = clock;
    this.#ids = ids;
    this.#keep = opts.keep !== false;
    this.#caller = new CallerTimeline(
      opts.caller ? to8k(opts.caller) : new Int16Array(0),
      RATE,
      opts.caller?.cues,
    );
    this.#says = (opts.says ?? []).map((s) =>
      "keys" in s ? { keys: keysOf(s), label: s.label } : { pcm: to8k(s), label: s.label },
    );
    this.#dtmf = [...(opts.dtmf ?? [])].sort((a, b) => a.atMs - b.atMs);
    this.#maxFrames = frames((opts.maxSeconds ?? 120) * 1000);
    this.#replyGap = frames(opts.replyGapMs ?? 700);
    this.#noReply = frames(opts.noReplyMs ?? 5000);
    this.#hangUpAfter = frames(opts.hangUpAfterMs ?? 2000);
    this.#agentRec = new Recording(this.#keep ? undefined : 0);
    this.#callerRec = new Recording(this.#keep ? undefined : 0);
    this.#segmenter = new UtteranceSegmenter(
      opts.speechThresholdDbfs !== undefined ? { thresholdDbfs: opts.speechThresholdDbfs } : {},
    );
  }

  /** One message from the bridge; `arrivedAt` on the clock's timeline when a reader stamped it. */
  readonly onMessage = (
    data: Buffer | ArrayBuffer | Buffer[],
    isBinary: boolean,
    arrivedAt?: number,
  ): void => {
    // A stream stopped for a conference: what the bridge still sends is dropped, as by Twilio.
    if (isBinary || this.#seat) return;
    const parsed = parseAppMessage(data.toString());
    if (!parsed.ok) {
      this.#emit("protocol-error", parsed.reason);
      return;
    }
    const msg = parsed.message;
    if (msg.streamSid !== this.#ids.streamSid) return;
    const read = this.#nowMs();
    const t = arrivedAt !== undefined ? arrivedAt - this.#t0 : read;
    if (msg.event === "media") {
      const bytes = Buffer.from(msg.media.payload, "base64");
      this.#playout.audio(mulawDecode(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength)));
      if (t - this.#lastReceiptMs > 200) this.#emit("agent-audio");
      this.#lastReceiptMs = t;
      if (this.#keep) this.#receipts.push(t);
      this.#mediaReceived++;
      this.#opts.onAgentMessage?.("media", t, read);
    } else if (msg.event === "mark") {
      this.#pendingMarks.set(msg.mark.name, read);
      this.#echo(this.#playout.mark(msg.mark.name), false);
    } else {
      this.#clears.push(t);
      this.#opts.onAgentMessage?.("clear", t, read);
      this.#emit("clear");
      this.#echo(this.#playout.clear(), true);
    }
  };

  /** Starts the stream, plays it to its end, and waits (2 s at most) for the bridge to close it. */
  async run(customParameters: Record<string, string>): Promise<void> {
    const { accountSid, callSid, streamSid } = this.#ids;
    const ws = this.#ws;
    const closed = new Promise<void>((resolve) => {
      ws.on("close", (code) => {
        this.#emit("closed", String(code));
        if (!this.#seat) this.#finish("bridge");
        resolve();
      });
    });
    this.#send({ event: "connected", protocol: "Call", version: "1.0.0" });
    this.#sequenced("start", {
      start: {
        accountSid,
        streamSid,
        callSid,
        tracks: ["inbound"],
        customParameters,
        mediaFormat: { ...MEDIA_FORMAT },
      },
    });
    this.#t0 = this.#clock.now();
    this.#emit("start", callSid);
    const ended = this.#opts.ended;
    ended?.addEventListener("abort", () => {
      if (this.#endedBy !== null) return;
      this.#sequenced("stop", { stop: { accountSid, callSid } });
      if (ended.reason instanceof ConferenceSeat) this.#enterConference(ended.reason);
      else this.#finish("bridge");
      ws.close(1000, "stop");
    });
    this.#wake();

    await this.#done;
    await Promise.race([closed, new Promise<void>((r) => this.#clock.setTimeout(r, 2000))]);
    if (ws.readyState !== WebSocket.CLOSED) ws.terminate();
  }

  /** What the stream measured, once run() has returned. */
  outcome(): StreamOutcome {
    return {
      durationMs: this.#k * FRAME_MS,
      endedBy: this.#endedBy ?? "bridge",
      rate: RATE,
      agentAudio: this.#agentRec.toArray(),
      callerAudio: this.#callerRec.toArray(),
      holds: [...this.#caller.holds],
      mediaSent: this.#mediaSent,
      mediaReceived: this.#mediaReceived,
      mediaReceivedMs: this.#receipts,
      marks: this.#marks,
      clears: this.#clears,
      turns: this.#turns(),
      agentKeys: this.#agentKeys,
      ...(this.#seat
        ? {
            conference: {
              name: this.#seat.conference.name,
              atMs: this.#conferenceAtMs,
              fromMs: this.#conferenceFromMs,
            },
          }
        : {}),
    };
  }

  /** New TwiML put the call in a conference: the stream is over, the call goes on there. */
  #enterConference(seat: ConferenceSeat): void {
    this.#seat = seat;
    this.#conferenceAtMs = this.#nowMs();
    // Frames play on their due time, k × 20 ms; frame k is the next one stepped, and hears the conference.
    this.#conferenceFromMs = this.#k * FRAME_MS;
    // What the bridge sent and was not yet played goes with the stream.
    this.#playout.clear();
    this.#emit("conference", seat.conference.name);
    seat.left.addEventListener(
      "abort",
      () => this.#finish(seat.left.reason === "conference-ended" ? "conference" : "caller"),
      { once: true },
    );
  }

  #nowMs(): number {
    return this.#clock.now() - this.#t0;
  }

  #emit(kind: SimEvent["kind"], detail?: string): void {
    this.#opts.onEvent?.({
      atMs: Math.round(this.#nowMs()),
      kind,
      ...(detail !== undefined ? { detail } : {}),
    });
  }

  #send(msg: Record<string, unknown>): void {
    if (this.#ws.readyState === WebSocket.OPEN) this.#ws.send(JSON.stringify(msg));
  }

  #sequenced(event: string, body: Record<string, unknown>): void {
    this.#send({ event, sequenceNumber: String(++this.#seq), ...body, streamSid: this.#ids.streamSid });
  }

  #setAudible(k: number, v: boolean): void {
    this.#agentAudible[this.#keep ? k : k % AUDIBLE_RING] = v;
  }

  #audibleAt(k: number): boolean {
    return this.#agentAudible[this.#keep ? k : k % AUDIBLE_RING] === true;
  }

  #echo(names: string[], cleared: boolean): void {
    for (const name of names) {
      this.#sequenced("mark", { mark: { name } });
      if (this.#keep)
        this.#marks.push({
          name,
          receivedMs: this.#pendingMarks.get(name) ?? this.#nowMs(),
          echoedMs: this.#nowMs(),
          cleared,
        });
      this.#pendingMarks.delete(name);
    }
  }

  #finishUtterance(u: Utterance | null): void {
    if (!u) return;
    if (!this.#keep) return;
    const last = this.#utterances.at(-1);
    if (last && last.startFrame === u.startFrame) return;
    this.#utterances.push({
      ...u,
      bargeIn: this.#audibleAt(u.startFrame - 1) || this.#audibleAt(u.startFrame),
    });
  }

  #wake(): void {
    this.#timer = undefined;
    const now = this.#clock.now();
    while (this.#endedBy === null && now >= this.#t0 + this.#k * FRAME_MS) {
      this.#step();
      this.#k++;
    }
    if (this.#endedBy === null)
      this.#timer = this.#clock.setTimeout(
        () => this.#wake(),
        this.#t0 + this.#k * FRAME_MS - this.#clock.now(),
      );
  }

  /** Frame k: 20 ms of the caller sent and of the agent played, then whether the caller speaks or hangs up. */
  #step(): void {
    const k = this.#k;
    this.#sendCallerFrame(k);
    while (this.#nextDtmf < this.#dtmf.length && this.#dtmf[this.#nextDtmf]!.atMs <= k * FRAME_MS)
      this.#press(this.#dtmf[this.#nextDtmf++]!.digit, k);
    const keys = this.#keys;
    if (keys && k >= keys.due) {
      this.#press(keys.digits[keys.pos++]!, k);
      keys.due = k + KEY_GAP;
      if (keys.pos >= keys.digits.length) this.#keys = null;
    }

    // Agent: 20 ms of the playout line, or of the others in the conference.
    const played = this.#seat
      ? { samples: this.#seat.hear(this.#agentFrame) ? FRAME : 0, marks: [] }
      : this.#playout.play(this.#agentFrame);
    if (this.#keep) this.#agentRec.append(this.#agentFrame);
    if (played.samples > 0)
      for (const digit of this.#agentKeyDetector.push(this.#agentFrame))
        this.#agentKeys.push({ digit, atMs: k * FRAME_MS });
    this.#setAudible(k, played.samples > 0);
    if (played.samples > 0) this.#lastAgentFrame = k;
    this.#echo(played.marks, false);

    // The next reactive turn: after the agent replied and fell silent, or after a long silence.
    const agentQuiet = this.#playout.buffered === 0 && !this.#audibleAt(k);
    const lastAgent = this.#lastAgentFrame;
    const lastCaller = this.#lastCallerActivity;
    if (!this.#say && !this.#keys && this.#nextSay < this.#says.length && agentQuiet) {
      const replied = lastAgent > lastCaller && k - lastAgent >= this.#replyGap;
      const nobody = k - Math.max(lastCaller, lastAgent, 0) >= this.#noReply;
      if (replied || nobody) {
        const next = this.#says[this.#nextSay++]!;
        if ("keys" in next) this.#keys = { digits: next.keys, pos: 0, due: k + 1 };
        else this.#say = { pcm: next.pcm, pos: 0, label: next.label, start: k + 1 };
        this.#emit("say", next.label ?? `turn ${this.#nextSay}`);
      }
    }

    // Hang up once the caller has nothing left and the agent has had its say.
    const callerDone =
      this.#caller.done &&
      this.#nextSay >= this.#says.length &&
      !this.#say &&
      !this.#keys &&
      this.#nextDtmf >= this.#dtmf.length &&
      !this.#segmenter.speaking;
    if (callerDone && agentQuiet) {
      const replied = lastAgent > lastCaller && k - lastAgent >= this.#hangUpAfter;
      const nobody = k - Math.max(lastCaller, lastAgent, 0) >= this.#noReply;
      if (replied || nobody) {
        this.#finish("caller");
        return;
      }
    }
    if (k + 1 >= this.#maxFrames) this.#finish("max-seconds");
  }

  /** A key pressed in frame k (Twilio's `dtmf` message). */
  #press(digit: string, k: number): void {
    this.#sequenced("dtmf", { dtmf: { track: "inbound_track", digit } });
    this.#lastCallerActivity = k;
    this.#emit("dtmf", digit);
  }

  /** Caller: the timeline plus any reactive turn being spoken, mixed, sent as frame k's media. */
  #sendCallerFrame(k: number): void {
    const callerFrame = this.#callerFrame;
    this.#caller.next(callerFrame, k > 0 && this.#audibleAt(k - 1));
    const s = this.#say;
    if (s) {
      const n = Math.min(FRAME, s.pcm.length - s.pos);
      for (let i = 0; i < n; i++) {
        const v = callerFrame[i]! + s.pcm[s.pos + i]!;
        callerFrame[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
      }
      s.pos += n;
      if (s.pos >= s.pcm.length) {
        this.#sayspans.push({ start: s.start, end: k + 1, label: s.label });
        this.#say = null;
      }
    }
    if (this.#keep) this.#callerRec.append(callerFrame);
    if (this.#seat) this.#seat.say(callerFrame);
    else this.#sendMedia(k, callerFrame);
    const seg = this.#segmenter.push(k, callerFrame);
    if (seg.started) this.#emit("caller-speech");
    if (seg.ended) {
      this.#emit("caller-silence");
      this.#finishUtterance(seg.ended);
    }
    if (seg.speech) this.#lastCallerActivity = k;
  }

  #sendMedia(k: number, frame: Int16Array): void {
    this.#sequenced("media", {
      media: {
        track: "inbound",
        chunk: String(k + 1),
        timestamp: String(k * FRAME_MS),
        payload: Buffer.from(mulawEncode(frame)).toString("base64"),
      },
    });
    this.#mediaSent++;
  }

  #finish(by: SimResult["endedBy"]): void {
    if (this.#endedBy !== null) return;
    this.#endedBy = by;
    this.#clock.clearTimeout(this.#timer);
    this.#seat?.hangUp();
    this.#finishUtterance(this.#segmenter.finish());
    if (by !== "bridge") {
      const { accountSid, callSid } = this.#ids;
      this.#sequenced("stop", { stop: { accountSid, callSid } });
      this.#emit("stop", by);
      this.#ws.close(1000, "stop");
    }
    this.#resolveDone();
  }

  /** The caller's utterances with what the agent did about each: barge-in and clear, or a reply. */
  #turns(): SimTurn[] {
    const utterances = this.#utterances;
    const agentAudible = this.#agentAudible;
    return utterances.map((u, index): SimTurn => {
      const startMs = u.startFrame * FRAME_MS;
      const endMs = u.endFrame * FRAME_MS;
      const span = this.#sayspans.find((s) => s.start < u.endFrame && s.end > u.startFrame);
      const label = span ? span.label : this.#opts.caller?.label;
      const nextStart = utterances[index + 1] ? utterances[index + 1]!.startFrame * FRAME_MS : Infinity;
      const clear = u.bargeIn ? this.#clears.find((t) => t >= startMs && t <= endMs + 1000) : undefined;
      const agentStillTalking = agentAudible[u.endFrame] === true && agentAudible[u.endFrame - 1] === true;
      const reply = agentStillTalking ? undefined : this.#receipts.find((t) => t >= endMs && t < nextStart);
      return {
        index,
        source: span ? "say" : "wav",
        ...(label !== undefined ? { label } : {}),
        startMs,
        endMs,
        bargeIn: u.bargeIn,
        clearMs: clear !== undefined ? Math.round(clear - startMs) : null,
        responseMs: reply !== undefined ? Math.round(reply - endMs) : null,
      };
    });
  }
}
