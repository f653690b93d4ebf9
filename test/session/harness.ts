// Scripted services and a transport that plays audio in virtual time, for turn-taking
// tests of the real CallSession. Nothing here reaches the network.
import { pino } from "pino";
import type { ChatMessage, ChatTool } from "../../src/api/types/index.ts";
import { flushMicrotasks, VirtualClock } from "../../src/core/clock.ts";
import { TranscriptStore } from "../../src/records/call-record.ts";
import type { CallEnd } from "../../src/records/outcome.ts";
import { CallSession, type SessionDeps } from "../../src/session/call-session.ts";
import {
  DEFAULT_SESSION_CONFIG,
  type SessionConfig,
  type TurnTakingConfig,
} from "../../src/session/config.ts";
import type { ChatEvent, RecognitionHints, TtsEvent, TtsStream } from "../../src/session/services.ts";
import type { SpeechEvent } from "../../src/session/speech-detector.ts";
import type { AgentAudio, CallTransport, Speaker, TransportListener } from "../../src/session/transport.ts";

export const RATE = 8000;

/**
 * Turn-taking as the harness runs it: the scripted caller's audio is silence, so there is no
 * prosody, and the words decide through the scripted completion model with a weight that makes
 * P(</s>) ≈ 1 end the turn at the shortest wait and P(</s>) ≈ 0 at the longest.
 */
export const HARNESS_TURN: TurnTakingConfig = {
  ...DEFAULT_SESSION_CONFIG.turn,
  endOfTurnProsody: false,
  endOfTurnLmWeight: 4,
};
/** Scripted speech: each word of agent audio lasts this long. */
export const MS_PER_WORD = 200;

/** An async queue usable as an AsyncIterable. */
export class Channel<T> implements AsyncIterable<T> {
  #items: T[] = [];
  #waiters: { resolve: (r: IteratorResult<T>) => void; reject: (e: Error) => void }[] = [];
  #closed = false;
  #error: Error | undefined;
  push(item: T): void {
    if (this.#closed) return;
    const w = this.#waiters.shift();
    if (w) w.resolve({ value: item, done: false });
    else this.#items.push(item);
  }
  close(error?: Error): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#error = error;
    for (const w of this.#waiters.splice(0)) {
      if (error) w.reject(error);
      else w.resolve({ value: undefined, done: true });
    }
  }
  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.#items.length) return Promise.resolve({ value: this.#items.shift()!, done: false });
        if (this.#error) return Promise.reject(this.#error);
        if (this.#closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => this.#waiters.push({ resolve, reject }));
      },
    };
  }
}

export class VirtualTransport implements CallTransport {
  readonly info = {
    callId: "CA-test",
    transport: "test" as const,
    from: "+15550001",
    to: "+15550002",
    params: {},
  };
  readonly inputRate = 16000;
  readonly output = { kind: "pcm", rate: RATE } as const;
  listener!: TransportListener;
  readonly played: Int16Array[] = [];
  #queued = 0;
  #played = 0;
  clears = 0;
  readonly clearTimes: number[] = [];
  hangups: string[] = [];
  transfers: string[] = [];
  failTransfer = false;
  /** Like SIP: the transport reports the end of the call it was asked to end before the request returns. */
  endsWhenAsked = false;
  readonly #clock: VirtualClock;
  #lastTick: number;
  /** Clock times at which audio was first queued after silence (agent starts speaking). */
  readonly speechStarts: number[] = [];

  constructor(clock: VirtualClock) {
    this.#clock = clock;
    this.#lastTick = clock.now();
  }
  attach(listener: TransportListener): void {
    this.listener = listener;
  }
  play(audio: AgentAudio): void {
    if (!(audio instanceof Int16Array)) throw new TypeError("the virtual transport plays PCM");
    const pcm = audio;
    this.tick();
    if (this.#queued <= this.#played) this.speechStarts.push(this.#clock.now());
    this.played.push(pcm);
    this.#queued += (pcm.length * 1000) / RATE;
  }
  clear(): void {
    this.tick();
    this.clears += 1;
    this.clearTimes.push(this.#clock.now());
    this.#queued = this.#played;
  }
  queuedMs(): number {
    this.tick();
    return this.#queued;
  }
  playedMs(): number {
    this.tick();
    return this.#played;
  }
  /** Advances the playout line to the clock. */
  tick(): void {
    const now = this.#clock.now();
    const elapsed = now - this.#lastTick;
    this.#lastTick = now;
    if (this.#played < this.#queued && elapsed > 0) {
      this.#played = Math.min(this.#queued, this.#played + elapsed);
      this.listener?.played(this.#played);
    }
  }
  get agentSpeaking(): boolean {
    this.tick();
    return this.#played < this.#queued;
  }
  async hangUp(reason: string): Promise<void> {
    this.hangups.push(reason);
    if (this.endsWhenAsked) this.listener.ended(`hang-up (${reason})`);
  }
  async transfer(target: string): Promise<void> {
    if (this.failTransfer) throw new Error("no credentials");
    this.transfers.push(target);
    if (this.endsWhenAsked) this.listener.ended("transferred");
  }
}

/**
 * What one TTS session does wrong: the server closes it (as E5 does with 1011) after it has sent
 * `cutAfterAudio` audio deltas, or it takes text and never sends any audio.
 */
export type TtsFault = { cutAfterAudio: number } | { silent: true };

/** A TTS session the harness opened: the text it was sent, the sentences it began, whether it is closed. */
export interface ScriptedTtsSession {
  text: string;
  sentences: string[];
  closed: boolean;
}

/**
 * The scripted synthesizer's audio for a word: 200 ms whose samples follow from the word's letters
 * and their place in it, so the same words give the same audio in any session, and audio put
 * together in the wrong order (or with a piece twice) does not match.
 */
export function wordAudio(word: string): Int16Array {
  const out = new Int16Array((RATE * MS_PER_WORD) / 1000);
  let seed = 0;
  for (const c of word) seed = (seed * 31 + c.charCodeAt(0)) % 997;
  for (let i = 0; i < out.length; i++) out[i] = 1000 + ((seed * 7 + i) % 1000);
  return out;
}

/** The scripted synthesizer's audio for words, as one piece. */
export function spokenAudio(text: string): Int16Array {
  const words = text.trim().split(/\s+/).filter(Boolean).map(wordAudio);
  const out = new Int16Array(words.reduce((n, w) => n + w.length, 0));
  let at = 0;
  for (const w of words) {
    out.set(w, at);
    at += w.length;
  }
  return out;
}

export interface ScriptedReply {
  text?: string;
  tool?: { name: string; arguments: string };
  fail?: boolean;
}

export class Harness {
  readonly clock: VirtualClock;
  readonly transport: VirtualTransport;
  readonly transcripts = new TranscriptStore(undefined);
  readonly session: CallSession;
  readonly chatRequests: ChatMessage[][] = [];
  readonly toolLists: ChatTool[][] = [];
  /** Samples of each utterance recognized (streamed or in one request), in order. */
  readonly asrRequests: number[] = [];
  /** The hints each recognition (streamed or one request) was asked with, in order. */
  readonly asrHints: Array<RecognitionHints | undefined> = [];
  /** Utterances streamed, and those dropped before their end. */
  asrStreams = 0;
  asrAborts = 0;
  /** Recognitions (streamed or one request) still waiting for the service. */
  asrPending = 0;
  /** ASR answers, in order; a string, or an Error to throw. */
  asrAnswers: (string | Error)[] = [];
  asrDelayMs = 80;
  /** Delays of the next recognitions, in order, before asrDelayMs applies again. */
  asrDelaysMs: number[] = [];
  chatReplies: ScriptedReply[][] = [];
  defaultReply: ScriptedReply[] = [{ text: "Okay." }];
  tokenMs = 10;
  /** TTS is down: no session opens, and a session open already is closed when it is next sent text. */
  ttsDown = false;
  /**
   * What the TTS sessions do wrong, in the order they are first sent text from now on (undefined:
   * nothing). Bound then rather than when opened: the spare a reply takes was opened long before.
   */
  ttsFaults: (TtsFault | undefined)[] = [];
  /** How long a TTS session takes to open, ms. */
  ttsOpenMs = 5;
  /** Every TTS session opened, in order. */
  readonly ttsSessions: ScriptedTtsSession[] = [];
  /** Audio per audio event, ms: a word's by default; another length cuts words across events. */
  ttsChunkMs = MS_PER_WORD;
  /** What the VAD says of the last audio outside speech: a possible onset not yet decided. */
  onset = false;
  /**
   * The scripted completion model: P(the sentence ends after these words). By default every
   * utterance sounds complete enough to end the turn at the shortest wait (see HARNESS_TURN).
   */
  endProbability: (words: string) => number | undefined = () => 0.99;
  /** Words the completion model was asked about, in order. */
  readonly completionAsked: string[] = [];
  /** Each speaker's VAD output, in the order their listeners were made (the order of `speakers`). */
  readonly #emits: ((e: SpeechEvent) => void)[] = [];
  /** A multi-party conversation's members (frames are tagged with them); none for a phone call. */
  readonly speakers: Speaker[];
  #streamMs = 0;
  readonly #logLines: string[] = [];
  /** Replies started before their turn was confirmed: used, or thrown away (onSpeculation). */
  readonly speculation: { used: boolean; chatRequests: number }[] = [];
  /** How the session ended, as it told its owner (onEnd). */
  ended: CallEnd | undefined;
  /** The lone caller's audio: a 20 ms frame (320 samples) at stream position `atMs`; silence if unset. */
  callerAudio: ((atMs: number) => Int16Array) | undefined;

  /** The session's log lines so far with this message, parsed. */
  logLines(msg: string): Record<string, unknown>[] {
    return this.#logLines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === msg);
  }

  /** `deps`: more of the session's dependencies (e.g. the agents a handoff resolves). */
  constructor(
    clock: VirtualClock,
    config: Partial<SessionConfig> = {},
    speakers: Speaker[] = [],
    deps: Partial<SessionDeps> = {},
  ) {
    this.clock = clock;
    this.speakers = speakers;
    this.transport = new VirtualTransport(clock);
    const h = this;
    this.session = new CallSession({
      transport: this.transport,
      clock,
      config: {
        ...DEFAULT_SESSION_CONFIG,
        greeting: "Hello.",
        ...config,
        turn: { ...HARNESS_TURN, ...config.turn },
      },
      // Info and up kept for the tests to read (logLines()); SESSION_LOG=debug prints them as well.
      log: pino(
        { level: process.env.SESSION_LOG ?? "info" },
        {
          write: (line: string) => {
            this.#logLines.push(line);
            if (process.env.SESSION_LOG) process.stdout.write(line);
          },
        },
      ),
      transcripts: this.transcripts,
      createSpeechDetector: (onEvent) => {
        this.#emits.push(onEvent);
        return { push() {}, onsetPending: () => h.onset, close() {} };
      },
      onEnd: (end) => {
        this.ended = end;
      },
      onSpeculation: (sp) => this.speculation.push(sp),
      services: {
        asr: {
          // As the client does: an aborted request rejects at once, and counts as no longer pending.
          recognize: (pcm, _rate, signal, hints) => {
            if (signal.aborted) return Promise.reject(signal.reason);
            h.asrHints.push(hints);
            h.asrPending += 1;
            return new Promise<string>((resolve, reject) => {
              const settle = () => {
                h.asrPending -= 1;
                signal.removeEventListener("abort", onAbort);
              };
              const onAbort = () => {
                settle();
                reject(signal.reason);
              };
              signal.addEventListener("abort", onAbort, { once: true });
              h.recognize(pcm.length).then(
                (t) => {
                  if (signal.aborted) return;
                  settle();
                  resolve(t);
                },
                (e) => {
                  if (signal.aborted) return;
                  settle();
                  reject(e);
                },
              );
            });
          },
          open: (_rate, signal, hints) => {
            h.asrHints.push(hints);
            let samples = 0;
            let settled = false;
            let rejectEnd: ((e: Error) => void) | undefined;
            h.asrStreams += 1;
            h.asrPending += 1;
            const settle = () => {
              if (settled) return false;
              settled = true;
              h.asrPending -= 1;
              return true;
            };
            // As the client's upload does: it fails once its signal (the call's) aborts.
            signal.addEventListener("abort", () => abort(), { once: true });
            return {
              write: (pcm) => {
                samples += pcm.length;
              },
              // Decoding ran alongside the speech; asrDelayMs is what is left after its end.
              end: () =>
                new Promise<string>((resolve, reject) => {
                  if (settled) return reject(new Error("recognition aborted"));
                  rejectEnd = reject;
                  h.recognize(samples).then(
                    (t) => settle() && resolve(t),
                    (e) => settle() && reject(e),
                  );
                }),
              abort,
            };
            function abort(): void {
              if (!settle()) return;
              h.asrAborts += 1;
              rejectEnd?.(new Error("recognition aborted"));
            }
          },
        },
        chat: {
          async *stream(messages, tools, signal): AsyncIterable<ChatEvent> {
            h.chatRequests.push([...messages]);
            h.toolLists.push([...tools]);
            const script =
              h.chatRequests.length === 1 && messages.length === 1
                ? [{ text: "Hi." }]
                : (h.chatReplies.shift() ?? h.defaultReply);
            for (const step of script) {
              if (step.fail) throw new Error("chat upstream failed");
              if (step.tool) {
                yield { type: "tool-call", call: { id: `call_${h.chatRequests.length}`, ...step.tool } };
                continue;
              }
              for (const word of (step.text ?? "").split(/(?<= )/)) {
                await h.sleep(h.tokenMs);
                if (signal.aborted) return;
                yield { type: "text", text: word };
              }
            }
          },
        },
        tts: { open: async () => h.openTts() },
        turnCompletion: {
          endProbability: (words) => {
            h.completionAsked.push(words);
            return h.endProbability(words);
          },
        },
      },
      ...deps,
    });
  }

  async recognize(samples: number): Promise<string> {
    this.asrRequests.push(samples);
    await this.sleep(this.asrDelaysMs.shift() ?? this.asrDelayMs);
    const answer = this.asrAnswers.shift() ?? "";
    if (answer instanceof Error) throw answer;
    return answer;
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.clock.setTimeout(resolve, ms));
  }

  /**
   * A scripted realtime TTS: sentences cut at . ? ! followed by more text or on flush, MS_PER_WORD
   * of audio per word (wordAudio), sent in pieces of ttsChunkMs.
   */
  async openTts(): Promise<TtsStream> {
    await this.sleep(this.ttsOpenMs);
    if (this.ttsDown) throw new Error("TTS 503: overloaded");
    let fault: TtsFault | undefined;
    let bound = false;
    const bind = () => {
      if (!bound) fault = this.ttsFaults.shift();
      bound = true;
    };
    const record: ScriptedTtsSession = { text: "", sentences: [], closed: false };
    this.ttsSessions.push(record);
    const events = new Channel<TtsEvent>();
    let buffer = "";
    let closed = false;
    let audioSent = 0;
    const close = (error?: Error) => {
      closed = true;
      record.closed = true;
      events.close(error);
    };
    const synth = (sentence: string) => {
      const text = sentence.trim();
      if (!text || (fault && "silent" in fault)) return;
      const audio = spokenAudio(text);
      const chunk = (RATE * this.ttsChunkMs) / 1000;
      this.clock.setTimeout(() => {
        if (closed) return;
        record.sentences.push(text);
        events.push({ type: "sentence-start", text });
        for (let at = 0; at < audio.length; at += chunk) {
          const piece = audio.slice(at, at + chunk);
          events.push({ type: "audio", audio: piece, durationMs: (piece.length * 1000) / RATE });
          if (fault && "cutAfterAudio" in fault && ++audioSent === fault.cutAfterAudio) {
            close(new Error("tts: connection closed before the session finished (code 1011)"));
            return;
          }
        }
        events.push({ type: "sentence-end", text });
      }, 15);
    };
    return {
      get closed() {
        return closed;
      },
      events,
      sendText: (text) => {
        if (closed) throw new Error("tts: cannot send tts.text.delta: session failed");
        bind();
        if (this.ttsDown) {
          close(new Error("TTS 503: overloaded"));
          return;
        }
        record.text += text;
        buffer += text;
        for (let m = buffer.match(/^(.*?[.?!])\s+(.*)$/s); m; m = buffer.match(/^(.*?[.?!])\s+(.*)$/s)) {
          synth(m[1]!);
          buffer = m[2]!;
        }
      },
      flush: () => {
        if (closed) throw new Error("tts: cannot send tts.text.flush: session failed");
        bind();
        const rest = buffer;
        buffer = "";
        events.push({ type: "flushed" });
        synth(rest);
      },
      close() {
        close();
      },
    };
  }

  start(): void {
    this.session.start();
  }

  /** Feeds `ms` of caller audio (silence samples; VAD events are scripted) while time passes. */
  async run(ms: number): Promise<void> {
    for (let t = 0; t < ms; t += 20) {
      if (this.speakers.length === 0)
        this.transport.listener.audio(this.callerAudio?.(this.#streamMs) ?? new Int16Array(320));
      for (const speaker of this.speakers) this.transport.listener.audio(new Int16Array(320), speaker);
      this.#streamMs += 20;
      this.clock.advance(20);
      this.transport.tick();
      await flushMicrotasks(20);
    }
  }

  /** The caller speaks for `ms`: a speech-start now, speech-end after (reported by the VAD 100 ms late). */
  async say(ms: number, vadDelayMs = 100): Promise<void> {
    await this.sayAs(0, ms, vadDelayMs);
  }

  /** Speaker `who` (an index into `speakers`; 0 on a phone call) speaks for `ms`. */
  async sayAs(who: number, ms: number, vadDelayMs = 100): Promise<void> {
    const start = this.startSpeaking(who);
    await this.run(ms + vadDelayMs);
    await this.stopSpeaking(who, start + ms);
  }

  /** The VAD reports `who`'s speech starting now; returns the stream position. */
  startSpeaking(who: number): number {
    this.#emits[who]!({ type: "speech-start", atMs: this.#streamMs });
    return this.#streamMs;
  }

  /** The VAD reports `who`'s speech as having ended at stream position `atMs`. */
  async stopSpeaking(who: number, atMs: number): Promise<void> {
    this.#emits[who]!({ type: "speech-end", atMs });
    await flushMicrotasks(20);
  }

  /** Runs in 10 ms steps until the agent starts a new stretch of speech (at most `maxMs`). */
  async untilAgentStarts(maxMs = 2000): Promise<void> {
    const starts = this.transport.speechStarts.length;
    for (let t = 0; t < maxMs && this.transport.speechStarts.length === starts; t += 10) await this.run(10);
  }

  async untilAgentSilent(maxMs = 20_000): Promise<void> {
    await this.run(100);
    for (let t = 0; t < maxMs && (this.transport.agentSpeaking || !this.session.idle); t += 100)
      await this.run(100);
  }

  events() {
    return this.transcripts.get("CA-test")?.events ?? [];
  }

  historyOf(role: string): string[] {
    return this.session.history
      .messages()
      .filter((m) => m.role === role)
      .map((m) => (typeof m.content === "string" ? m.content : ""));
  }
}

/** The caller's line carrying `pcm` (16 kHz, from the call's first frame) in 20 ms frames, then silence: a `callerAudio`. */
export function lineCarrying(pcm: Int16Array): (atMs: number) => Int16Array {
  return (atMs) => {
    const from = Math.round((atMs * 16000) / 1000);
    const frame = new Int16Array(320);
    if (from < pcm.length) frame.set(pcm.subarray(from, Math.min(pcm.length, from + 320)));
    return frame;
  };
}

/** A harness on virtual time whose call has started and whose greeting is over. */
export async function startedHarness(config: Partial<SessionConfig> = {}): Promise<Harness> {
  const h = new Harness(new VirtualClock(), config);
  h.start();
  await h.untilAgentSilent();
  return h;
}
