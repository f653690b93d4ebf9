// Optional two-channel recording of each call (left the caller, right the agent as the caller
// heard it), as a decorator around the transport port: it sees every inbound frame and every
// play()/clear() on their way through, so neither the session nor any bridge knows it exists.
// Per frame it only copies the frame into the timeline (recording-timeline.ts says how the
// channels are laid out); once a second (`flushEveryMs`) the settled stretch goes to the file,
// which is written off the event loop with its header kept current (wav-file.ts), so a crash
// loses about a second and leaves a playable file. Memory per call: about two seconds of audio
// (per member speaking, on Discord) plus the agent audio queued for playout (which the transport
// holds too). A failure — permissions, a full disk, a bug here — is reported once and never
// reaches the call.
// A recording never replaces another: a call id recorded before (a Twilio stream that
// reconnected with the same CallSid, a call before a restart) gets `<callId>-2.wav`, `-3`, ….
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { OpusCodec } from "../../codecs/opus.ts";
import type { Clock, TimerHandle } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import { isPcm } from "./agent-audio.ts";
import { callFileStem } from "./call-file-name.ts";
import { PassThroughTransport } from "./pass-through-transport.ts";
import { RecordingTimeline } from "./recording-timeline.ts";
import type { AgentAudio, CallTransport, TransportListener } from "./transport.ts";
import { WavFileWriter } from "./wav-file.ts";

/** Calls whose recording's path CallRecorder remembers (older ones are looked for by name). */
const RECENT_PATHS = 1000;
/** Opus agent audio is recorded at this rate (then resampled to the recording's). */
const OPUS_DECODE_RATE = 48000;

export interface RecordingOptions {
  /**
   * The WAV file to create. A file already there is kept: the recording then goes to the first
   * free name of `<name>-2.wav`, `<name>-3.wav`, … (the `path` property says which).
   */
  path: string;
  clock: Clock;
  /**
   * Hears the first problem only: a failure (the call goes on, unrecorded from then) or audio
   * dropped because the disk fell behind (the recording goes on, with silence in its place).
   */
  onError(err: Error): void;
  /** How often settled audio goes to the file, ms (default 1000). */
  flushEveryMs?: number;
  /** Called once the file is closed. */
  onClosed?: () => void;
  /** Hears the path the recording was created under, once the file exists. */
  onCreated?: (path: string) => void;
}

export class RecordingTransport extends PassThroughTransport {
  readonly #clock: Clock;
  readonly #timeline: RecordingTimeline;
  readonly #file: WavFileWriter;
  readonly #onError: (err: Error) => void;
  readonly #flushEveryMs: number;
  readonly #startedAt: number;
  readonly #onClosed: (() => void) | undefined;
  readonly #onTick = () => this.#tick();
  #timer: TimerHandle | undefined;
  #opus: OpusCodec | undefined;
  #closing: Promise<void> | undefined;
  #failed = false;
  #reported = false;

  constructor(inner: CallTransport, opts: RecordingOptions) {
    super(inner);
    this.#clock = opts.clock;
    this.#onError = opts.onError;
    this.#flushEveryMs = opts.flushEveryMs ?? 1000;
    this.#onClosed = opts.onClosed;
    this.#timeline = new RecordingTimeline({
      callerRate: inner.inputRate,
      agentRate: inner.output.kind === "pcm" ? inner.output.rate : OPUS_DECODE_RATE,
    });
    this.#file = new WavFileWriter(opts.path, {
      sampleRate: inner.inputRate,
      channels: 2,
      // A failed file stops the recording; audio dropped behind a slow disk only leaves silence.
      onError: (err) => (this.#file.failed ? this.#fail(err) : this.#report(err)),
      onCreated: opts.onCreated,
    });
    this.#startedAt = opts.clock.now();
    this.#timer = opts.clock.setTimeout(this.#onTick, this.#flushEveryMs);
  }

  /** The file recorded to: the path asked for until the file exists, then the name it took. */
  get path(): string {
    return this.#file.path;
  }

  /** The recording's rate (the inbound rate): the agent's audio is resampled to it. */
  get rate(): number {
    return this.#timeline.rate;
  }

  /** Seconds of the call handed to the file so far. */
  get recordedSeconds(): number {
    return this.#timeline.takenSamples / this.#timeline.rate;
  }

  override attach(listener: TransportListener): void {
    this.inner.attach({
      audio: (frame, speaker) => {
        // Inline rather than through #guard: no closure per 20 ms frame.
        if (!this.#failed && !this.#closing) {
          try {
            this.#timeline.caller(frame, this.#elapsed(), speaker?.id);
          } catch (err) {
            this.#fail(err as Error);
          }
        }
        listener.audio(frame, speaker);
      },
      speakerLeft: (id) => listener.speakerLeft?.(id),
      dtmf: (digit) => listener.dtmf(digit),
      played: (ms) => listener.played(ms),
      ended: (reason) => {
        listener.ended(reason);
        void this.close();
      },
    });
  }

  override play(audio: AgentAudio): void {
    if (!this.#failed && !this.#closing)
      this.#guard(() => this.#timeline.agent(this.#pcm(audio), this.#elapsed()));
    this.inner.play(audio);
  }

  /** The agent's audio as PCM for the file: Opus packets are decoded here, for the recording only. */
  #pcm(audio: AgentAudio): Int16Array {
    if (isPcm(audio)) return audio;
    this.#opus ??= new OpusCodec(OPUS_DECODE_RATE, 1);
    const out = new Int16Array(audio.packets.length * (OPUS_DECODE_RATE / 50));
    audio.packets.forEach((p, i) => {
      out.set(this.#opus!.decode(p).subarray(0, OPUS_DECODE_RATE / 50), i * (OPUS_DECODE_RATE / 50));
    });
    return out;
  }

  override clear(): void {
    if (!this.#failed && !this.#closing) this.#guard(() => this.#timeline.clearAgent(this.#elapsed()));
    this.inner.clear();
  }

  /** Resolves once everything handed to the file so far is on disk. */
  flushed(): Promise<void> {
    return this.#file.flushed();
  }

  /**
   * Ends the recording now (the call is over): the rest goes to the file, whose header is then
   * complete. Agent audio still queued is left out, never heard. Idempotent; resolves once the
   * file is closed.
   */
  close(): Promise<void> {
    if (this.#closing) return this.#closing;
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    if (!this.#failed) this.#guard(() => this.#write(this.#timeline.finish(this.#elapsed())));
    this.#closing = this.#file.close().finally(() => this.#onClosed?.());
    return this.#closing;
  }

  #tick(): void {
    this.#timer = undefined;
    if (this.#failed || this.#closing) return;
    this.#guard(() => this.#write(this.#timeline.take(this.#elapsed())));
    if (!this.#failed) this.#timer = this.#clock.setTimeout(this.#onTick, this.#flushEveryMs);
  }

  #write(stereo: Int16Array): void {
    if (stereo.length > 0 && !this.#file.failed) this.#file.append(stereo);
  }

  #elapsed(): number {
    return this.#clock.now() - this.#startedAt;
  }

  /** Runs recording work so that nothing it throws can reach the call. */
  #guard(work: () => void): void {
    try {
      work();
    } catch (err) {
      this.#fail(err as Error);
    }
  }

  #fail(err: Error): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#report(err);
  }

  #report(err: Error): void {
    if (this.#reported) return;
    this.#reported = true;
    this.#onError(err);
  }
}

/**
 * Records every call it is given into one directory, `<callId>.wav` each (like the transcripts;
 * `<callId>-2.wav`, `-3`, … for a call id already recorded there).
 */
export class CallRecorder {
  readonly dir: string;
  readonly #clock: Clock;
  readonly #onError: (err: Error, callId: string) => void;
  readonly #log: Logger | undefined;
  readonly #recordings = new Set<RecordingTransport>();
  /** The latest recording of each recent call id, newest last (for pathOf). */
  readonly #recent = new Map<string, RecordingTransport>();

  /**
   * Creates `dir` if needed (throws if it cannot: a misconfigured directory should stop start-up).
   * `log` hears, once per call at info level, the file the call is recorded to.
   */
  constructor(dir: string, clock: Clock, onError: (err: Error, callId: string) => void, log?: Logger) {
    mkdirSync(dir, { recursive: true });
    this.dir = dir;
    this.#clock = clock;
    this.#onError = onError;
    this.#log = log;
  }

  /** Wraps a call's transport; the recording ends when the transport reports the end or on close(). */
  record(transport: CallTransport): RecordingTransport {
    const callId = transport.info.callId;
    const recording = new RecordingTransport(transport, {
      path: join(this.dir, `${callFileStem(callId)}.wav`),
      clock: this.#clock,
      onError: (err) => this.#onError(err, callId),
      onClosed: () => this.#recordings.delete(recording),
      onCreated: (path) => this.#log?.info({ callId, path }, `recording the call to ${path}`),
    });
    this.#recordings.add(recording);
    this.#recent.delete(callId);
    this.#recent.set(callId, recording);
    if (this.#recent.size > RECENT_PATHS) this.#recent.delete(this.#recent.keys().next().value!);
    return recording;
  }

  /**
   * The file a call was recorded to, if it exists: this run's latest recording of the id, else
   * `<callId>.wav` (a call of an earlier run; one recorded again under the same id is `-2`, `-3`…).
   */
  pathOf(callId: string): string | undefined {
    const path = this.#recent.get(callId)?.path ?? join(this.dir, `${callFileStem(callId)}.wav`);
    return existsSync(path) ? path : undefined;
  }

  /** Recordings not yet complete on disk. */
  get open(): number {
    return this.#recordings.size;
  }

  /** Ends every recording still open (shutdown) and resolves once all files are complete. */
  async close(): Promise<void> {
    await Promise.all([...this.#recordings].map((r) => r.close()));
  }
}
