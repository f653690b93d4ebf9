// The spoken side of one agent reply: its text goes to a realtime TTS session and the audio that
// comes back goes to the turn's playout. A session the service drops mid-reply (closed, an error,
// or no first audio within its deadline) is replaced, and the new one is sent the text the caller
// has not heard, from the first sentence whose audio did not come in full. E5 times sentences,
// not words: the sentence that was cut is sent again whole, and as much of its new audio as had
// already come (and may be playing) is dropped, so its words are heard once, with a gap where the
// cut was.
import type { Clock, TimerHandle } from "../core/clock.ts";
import type { Logger } from "../core/log.ts";
import { audioFrom, audioMs } from "./agent-audio.ts";
import type { SpokenSentence } from "./history.ts";
import type { TurnPlayout } from "./playout.ts";
import type { TtsEvent, TtsStream } from "./services.ts";
import type { AgentAudio, OutputFormat } from "./transport.ts";

/** Sessions replaced in one reply before it is given up (the caller then hears the apology). */
export const MAX_TTS_REOPENS = 2;

export interface ReplySpeechDeps {
  openTts: () => Promise<TtsStream>;
  playout: TurnPlayout;
  format: OutputFormat;
  clock: Clock;
  /** A session given a whole sentence (or flushed) that sends no audio this long is replaced, ms. */
  firstAudioMs: number;
  /** How long after `flushed` with no sentence open the audio counts as complete, ms. */
  flushSettleMs: number;
  log?: Logger | undefined;
}

export interface ReplySpeechEvents {
  /** Text went to a session. */
  sent(): void;
  /** Audio of the reply reached the playout. */
  audio(): void;
  /** All of the reply's audio has come. */
  complete(): void;
  /** No session could speak the reply. */
  failed(err: unknown): void;
}

/** Letters and digits: what a sentence's text has in common with the text sent for it. */
function letters(s: string): number {
  return s.match(/[\p{L}\p{N}]/gu)?.length ?? 0;
}

/**
 * Where `text` goes on after its first `count` letters and digits, past the marks and space that
 * close the sentence they end (the server's sentence texts are trimmed and may be normalised: the
 * letters are what they share with what was sent).
 */
function resumeAt(text: string, count: number): number {
  if (count <= 0) return 0;
  let n = 0;
  for (const m of text.matchAll(/[\p{L}\p{N}]/gu)) {
    if (++n < count) continue;
    const after = m.index + m[0].length;
    const closing = /^[.!?;:,…。！？；"'”’)\]}»」』\s]*/u.exec(text.slice(after))?.[0] ?? "";
    return after + closing.length;
  }
  return text.length;
}

/**
 * Text that a session in default mode must have answered with audio by now: a sentence end
 * followed by more text. (A "." counts after a word of four letters or more, so "Dr. Smith"
 * or "3.5" do not: the server holds those, and the deadline would cut a healthy session.)
 */
const WHOLE_SENTENCE = /(?:[!?;…。！？；]|\p{L}{4}\.)["'”’)\]]*\s+[\p{L}\p{N}]/u;

/**
 * Speech per letter of a sentence whose audio was cut (its length is unknown), when no sentence
 * of the reply came whole to go by, ms: about 14 characters a second, spaces included.
 */
const MS_PER_LETTER = 75;

export class ReplySpeech {
  /** The reply's sentences as the audio brought them, placed on the turn's audio. */
  readonly #sentences: SpokenSentence[] = [];
  readonly #d: ReplySpeechDeps;
  readonly #on: ReplySpeechEvents;
  #tts: TtsStream | undefined;
  /** All of the reply's text given to be spoken, and its letters. */
  #text = "";
  #textLetters = 0;
  /** Where the current (or next) session's text starts in #text, and how far it has been sent. */
  #from = 0;
  #sentTo = 0;
  #ended = false;
  #flushAcked = false;
  #open: SpokenSentence | undefined;
  #openLetters = 0;
  /** Letters of the sentences whose end came, and of those begun (on the current session). */
  #doneLetters = 0;
  #startedLetters = 0;
  /** The sentence a session was cut in: the next session's first sentence takes it up. */
  #carried: SpokenSentence | undefined;
  /** Audio of the carried sentence already played or queued: dropped from its new audio, ms. */
  #skipMs = 0;
  #sessionAudio = false;
  /** The session refused text (it is closing): what it sent is still read, then it is replaced. */
  #refused = false;
  #firstAudioTimer: TimerHandle | undefined;
  #settleTimer: TimerHandle | undefined;
  #reopens = 0;
  #complete = false;
  #closed = false;

  constructor(deps: ReplySpeechDeps, on: ReplySpeechEvents) {
    this.#d = deps;
    this.#on = on;
  }

  /**
   * The sentences for heardText: a sentence whose audio did not all come (a cut, a failure) is
   * given the length its letters would have at the pace of those that came whole, so that hearing
   * its first part does not count as hearing all of its words.
   */
  get sentences(): readonly SpokenSentence[] {
    const cut = this.#open ?? this.#carried;
    if (!cut) return this.#sentences;
    let ms = 0;
    let count = 0;
    for (const s of this.#sentences) {
      if (s === cut) continue;
      ms += s.durationMs;
      count += letters(s.text);
    }
    const perLetter = count > 0 ? ms / count : MS_PER_LETTER;
    const whole = Math.max(cut.durationMs, letters(cut.text) * perLetter);
    return this.#sentences.map((s) => (s === cut ? { ...s, durationMs: whole } : s));
  }

  /** Sessions opened to replace one that was cut. */
  get reopens(): number {
    return this.#reopens;
  }

  /** Opens the first session (tried twice); text spoken before it is open waits for it. */
  start(): void {
    void this.#connect(true);
  }

  speak(text: string): void {
    if (!text || this.#closed) return;
    this.#text += text;
    this.#textLetters += letters(text);
    if (this.#tts) this.#send(this.#tts);
  }

  /** The reply's text is complete: the session synthesizes what it still holds. */
  end(): void {
    if (this.#ended || this.#closed) return;
    this.#ended = true;
    if (this.#tts) this.#flush(this.#tts);
    this.#checkComplete();
  }

  /** Stops everything (the turn is over): the session is closed, one still opening when it opens. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#clearTimers();
    this.#tts?.close();
    this.#tts = undefined;
  }

  async #connect(first: boolean): Promise<void> {
    let retried = false;
    for (;;) {
      let tts: TtsStream;
      try {
        tts = await this.#d.openTts();
      } catch (err) {
        if (this.#closed) return;
        if (first && !retried) retried = true;
        else if (!first && this.#reopens < MAX_TTS_REOPENS) this.#reopens++;
        else {
          this.#on.failed(err);
          return;
        }
        this.#d.log?.warn({ err: (err as Error).message }, "could not open a TTS session: trying again");
        continue;
      }
      // The turn ended while the session opened: nobody else will close it.
      if (this.#closed) {
        tts.close();
        return;
      }
      this.#attach(tts);
      return;
    }
  }

  #attach(tts: TtsStream): void {
    this.#tts = tts;
    this.#sessionAudio = false;
    this.#refused = false;
    void this.#consume(tts);
    this.#send(tts);
    if (this.#ended && this.#tts === tts) this.#flush(tts);
  }

  #send(tts: TtsStream): void {
    const text = this.#text.slice(this.#sentTo);
    if (!text || this.#refused) return;
    this.#sentTo = this.#text.length;
    try {
      tts.sendText(text);
    } catch {
      // Closed under us: the events it sent before are still to be read, and their end cuts it.
      this.#refused = true;
      return;
    }
    this.#on.sent();
    this.#watch(tts);
  }

  #flush(tts: TtsStream): void {
    if (this.#refused) return;
    try {
      tts.flush();
    } catch {
      this.#refused = true;
      return;
    }
    this.#watch(tts);
  }

  /** Times the session's first audio once it has been given what must make some. */
  #watch(tts: TtsStream): void {
    if (this.#sessionAudio || this.#firstAudioTimer || this.#tts !== tts) return;
    const given = this.#text.slice(this.#from, this.#sentTo);
    if (letters(given) === 0 || !(this.#ended || WHOLE_SENTENCE.test(given))) return;
    const ms = this.#d.firstAudioMs;
    this.#firstAudioTimer = this.#d.clock.setTimeout(() => {
      this.#firstAudioTimer = undefined;
      this.#cut(tts, new Error(`no audio within ${ms} ms`));
    }, ms);
  }

  async #consume(tts: TtsStream): Promise<void> {
    try {
      for await (const ev of tts.events) {
        if (this.#tts !== tts) return;
        this.#onEvent(ev);
      }
      this.#cut(tts, new Error("the session ended mid-reply"));
    } catch (err) {
      this.#cut(tts, err);
    }
  }

  #onEvent(ev: TtsEvent): void {
    this.#d.clock.clearTimeout(this.#settleTimer);
    if (ev.type === "sentence-start") {
      const sentence = this.#carried ?? { text: ev.text, startMs: this.#d.playout.turnMs, durationMs: 0 };
      if (!this.#carried) this.#sentences.push(sentence);
      this.#carried = undefined;
      this.#open = sentence;
      this.#openLetters = letters(ev.text);
      this.#startedLetters += this.#openLetters;
    } else if (ev.type === "audio") {
      this.#audio(ev.audio);
    } else if (ev.type === "sentence-end") {
      if (this.#open) this.#doneLetters += this.#openLetters;
      this.#open = undefined;
      this.#skipMs = 0;
    } else {
      this.#flushAcked = true;
    }
    this.#checkComplete();
  }

  #audio(audio: AgentAudio): void {
    this.#sessionAudio = true;
    this.#d.clock.clearTimeout(this.#firstAudioTimer);
    this.#firstAudioTimer = undefined;
    let piece = audio;
    if (this.#skipMs > 0) {
      const ms = audioMs(audio, this.#d.format);
      if (ms <= this.#skipMs + 0.5) {
        this.#skipMs = ms >= this.#skipMs - 0.5 ? 0 : this.#skipMs - ms;
        return;
      }
      piece = audioFrom(audio, this.#skipMs, this.#d.format).rest;
      this.#skipMs = 0;
    }
    if (this.#open) this.#open.durationMs += audioMs(piece, this.#d.format);
    this.#d.playout.push(piece);
    this.#on.audio();
  }

  #checkComplete(): void {
    if (this.#complete || !this.#ended || !this.#flushAcked || this.#open || !this.#tts) return;
    if (this.#startedLetters >= this.#textLetters) {
      this.#markComplete();
      return;
    }
    // A session that has sent nothing for the words it was given is not done but silent: the
    // first-audio deadline decides.
    if (!this.#sessionAudio && letters(this.#text.slice(this.#from)) > 0) return;
    // Text normalisation on the server can make the counts differ: settle on a quiet spell.
    this.#d.clock.clearTimeout(this.#settleTimer);
    this.#settleTimer = this.#d.clock.setTimeout(() => this.#markComplete(), this.#d.flushSettleMs);
  }

  #markComplete(): void {
    if (this.#complete) return;
    this.#complete = true;
    this.#clearTimers();
    this.#on.complete();
  }

  /** The session stopped short of the reply: a new one takes up the text the caller has not heard. */
  #cut(tts: TtsStream, err: unknown): void {
    if (this.#tts !== tts || this.#closed || this.#complete) return;
    this.#tts = undefined;
    this.#clearTimers();
    tts.close();
    const from = resumeAt(this.#text, this.#doneLetters);
    if (this.#ended && letters(this.#text.slice(from)) === 0) {
      this.#markComplete(); // every sentence had come in full
      return;
    }
    const why = (err as Error)?.message ?? String(err);
    if (this.#reopens >= MAX_TTS_REOPENS) {
      this.#on.failed(new Error(`TTS session cut ${this.#reopens + 1} times in one reply: ${why}`));
      return;
    }
    this.#reopens++;
    if (this.#open) {
      this.#carried = this.#open;
      this.#skipMs = this.#open.durationMs;
    }
    this.#open = undefined;
    this.#startedLetters = this.#doneLetters;
    this.#flushAcked = false;
    this.#from = from;
    this.#sentTo = from;
    this.#d.log?.warn(
      {
        err: why,
        reopen: this.#reopens,
        resumeChars: this.#text.length - from,
        skipMs: Math.round(this.#skipMs),
      },
      "TTS session cut mid-reply: reopening it for the rest",
    );
    void this.#connect(false);
  }

  #clearTimers(): void {
    this.#d.clock.clearTimeout(this.#firstAudioTimer);
    this.#d.clock.clearTimeout(this.#settleTimer);
    this.#firstAudioTimer = undefined;
    this.#settleTimer = undefined;
  }
}
