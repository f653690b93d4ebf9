// Listening to one speaker: their audio at 16 kHz in a rolling window, the VAD over it, and
// the utterance streamed to recognition from the moment speech starts. A phone call has one
// of these; a voice channel one per member, so each person's words are detected and
// recognized on their own. What a speech start or end means for the conversation is the
// session's business: this only reports them, at clock times as well as stream positions.
import {
  NOISE_SUPPRESSOR_RATES,
  NoiseSuppressor,
  noiseSuppressorAvailable,
} from "../../codecs/noise-suppressor.ts";
import { Resampler } from "../../codecs/resample.ts";
import type { Clock } from "../core/clock.ts";
import { CallerVoice, type CallerVoiceFigures } from "./caller-voice.ts";
import type { TurnTakingConfig } from "./config.ts";
import type { LineLevel } from "./line-level.ts";
import { PauseProfile, type SpeechBefore } from "./pause-profile.ts";
import { type EndProsody, endProsody } from "./prosody.ts";
import type { Utterance } from "./recognition.ts";
import type { RecognitionHints, Recognizer } from "./services.ts";
import type { SpeechDetector, SpeechDetectorFactory } from "./speech-detector.ts";
import type { Speaker } from "./transport.ts";
import { AudioWindow } from "./utterance.ts";
import { UtteranceUpload } from "./utterance-upload.ts";
import { HANG_MS } from "./voice-end.ts";

/**
 * An utterance in which a voice at the speaker's level sounded this long in syllables
 * (voiced-stretches.ts), and in syllables for SYLLABIC_SHARE of it at least, held words whether or
 * not the recognizer made any out, ms: a noise as loud has no period in it, an engine drones on,
 * and a room's voice is softer or of another pitch. Offline (bench/lib/turns-gate.ts, 15 rooms
 * and the held-out flite set under each), 31 of 1,579 questions held less; none of 58 coughs taken
 * for speech held 200 ms (140 at most); of a synthesized bus's passages as loud as the caller
 * taken for speech, 2 of 18 held more (17 held 200 ms of voice counted whole). A room's voice taken
 * for the caller's (a conversation, a TV, a shop's announcements) held more in 48 of 160: those are
 * what ASK_AGAIN_MAX bounds (apology.ts).
 */
export const SPOKE_MS = 200;
/** ...see SPOKE_MS: a drone's stretches are the most of its voice. */
export const SYLLABIC_SHARE = 0.5;

export const VAD_RATE = 16000;

export interface ListenerEvents {
  /** The VAD heard speech begin at stream position `atMs` (the upload starts right after). */
  speechStart(l: SpeakerListener, atMs: number): void;
  speechEnd(l: SpeakerListener, atMs: number): void;
  /** A frame of `frameMs` arrived while the speaker was not speaking: a chance to watch for an onset. */
  quietFrame(l: SpeakerListener, frameMs: number): void;
}

export interface ListenerOptions {
  speaker: Speaker | undefined;
  inputRate: number;
  createSpeechDetector: SpeechDetectorFactory;
  asr: Recognizer;
  clock: Clock;
  events: ListenerEvents;
  /** Aborted when the call ends: whatever is still uploading stops. */
  signal: AbortSignal;
  /** The line the call came in on: its usual caller level, which this call's caller teaches in turn. */
  line?: LineLevel;
  /** The agent is speaking (or its reply's audio is on its way). */
  agentSpeaking?: () => boolean;
  /** adaptToCaller: learn the speaker's pauses; callerLevelGate: only speech at their level is theirs. */
  turn: Pick<TurnTakingConfig, "adaptToCaller" | "callerLevelGate" | "prerollMs" | "noiseSuppression">;
}

/**
 * Silence inside speech after which the utterance's upload ends, ms: two of Silero's 32 ms
 * windows. Shorter, stops between words end it too often; the detector's own speech-end needs
 * 160 ms (codecs/speech-segmenter.ts), so ~100 ms of each turn's wait for its transcript is saved.
 */
export const EARLY_END_MS = 64;

/**
 * The same over a loud room, where the caller's own voice alone tells their pause (its level,
 * caller-voice.ts pauseMs), ms. That level dips between words far more often than the detector
 * pauses: at 64 ms the whole utterance was sent again once per utterance on average (offline,
 * the noisy set in a café, a street, babble and a talker at 10–16 dB). At 200 ms 0.15–0.6 times
 * (music at 10 dB: 0.74; 0.22 on a quiet line at 64), and the upload ends 200–240 ms after the
 * voice instead of 290–460 (the detector's end, or HANG_MS): a hosted service's transcript, and
 * the reply, come that much sooner.
 */
export const EARLY_END_LOUD_MS = 200;

/** Audio after the end of the speaker's voice that their utterance keeps in a loud room, ms. */
const END_PAD_MS = 100;
/** Audio before an utterance's end that its end prosody is read from, ms. */
const PROSODY_MS = 1500;
/**
 * Speech begun over the agent is most often an acknowledgement, and its words decide whether the
 * agent goes on (interruptions.ts): its recognizer is told, to listen for them (svc-adapters.ts).
 */
const OVER_AGENT: RecognitionHints = { overAgent: true };

export class SpeakerListener {
  readonly speaker: Speaker | undefined;
  readonly audio = new AudioWindow(VAD_RATE, 60);
  /** The VAD says this speaker is speaking. */
  speaking = false;
  /** Stream position where the utterance being spoken began (pre-roll included), ms (beginUtterance). */
  utteranceStartMs = 0;
  /** Clock time of the latest speech start. */
  speechStartAt = 0;
  /** Stream position of the latest speech start (or of the speaker's voice, when it restarted), ms. */
  #speechStartMs = 0;
  /** How this speaker pauses, learned as they talk. */
  readonly pauses: PauseProfile;
  readonly #o: ListenerOptions;
  readonly #detector: SpeechDetector;
  /** The detector's speech, sifted to the speaker's own voice. */
  readonly #voice: CallerVoice;
  readonly #resampler: Resampler | undefined;
  #upsampled = new Int16Array(0);
  /** The speaker's noise suppressed (turn.noiseSuppression), at their rate or else the VAD's. */
  readonly #ns: NoiseSuppressor | undefined;
  /** The utterance being spoken, already on its way to recognition. */
  #upload: UtteranceUpload | undefined;
  /** What helps recognize the utterance being spoken (it began over the agent). */
  #hints: RecognitionHints | undefined;
  /** Uploads ended at a pause that the speaker went on after (each one more recognition request). */
  earlyEndsDropped = 0;
  /** The speaker's own voice heard before the utterance being spoken (CallerVoice.ownVoiceMs). */
  #ownVoiceBefore = 0;
  /** ...and a voice at their level, and that in syllables (CallerVoice.voiced). */
  #voicedBefore = 0;
  #syllabicBefore = 0;
  /** Words of the speaker's were recognized in this call: their voice is known from their speech. */
  wordsHeard = false;
  #closed = false;

  constructor(opts: ListenerOptions) {
    this.#o = opts;
    this.speaker = opts.speaker;
    this.pauses = new PauseProfile(opts.turn.adaptToCaller);
    if (opts.inputRate !== VAD_RATE) this.#resampler = new Resampler(opts.inputRate, VAD_RATE);
    if (opts.turn.noiseSuppression && noiseSuppressorAvailable())
      this.#ns = new NoiseSuppressor(
        NOISE_SUPPRESSOR_RATES.includes(opts.inputRate) ? opts.inputRate : VAD_RATE,
      );
    // The gate is for a phone's one stream, where the caller is the near, loud voice and anyone
    // else the room. In a voice channel each member has their own stream: nobody is the room.
    this.#voice = new CallerVoice(
      opts.turn.callerLevelGate && opts.speaker === undefined,
      {
        start: (atMs) => this.#speechStart(atMs),
        end: (atMs) => {
          this.speaking = false;
          if (this.#voice.level.roomIsLoud()) this.#keepToVoice(atMs);
          opts.events.speechEnd(this, atMs);
        },
        // The room was taken for the speaker until their voice (far louder, or louder and of another
        // pitch) began: their words are recognized from there.
        restart: (atMs) => {
          this.#speechStartMs = atMs;
          this.utteranceStartMs = Math.max(0, atMs - opts.turn.prerollMs);
          this.#openUpload();
        },
      },
      { lineDb: opts.line?.usualDb(), agentSpeaking: opts.agentSpeaking },
    );
    this.#detector = opts.createSpeechDetector(
      (e) => {
        if (this.#closed) return;
        if (e.type === "speech-start") this.#voice.vadStart(e.atMs);
        else this.#voice.vadEnd(e.atMs);
      },
      (startMs, endMs, probability) => this.#voice.near(startMs, endMs, probability),
    );
  }

  #speechStart(atMs: number): void {
    const opts = this.#o;
    this.speaking = true;
    this.#speechStartMs = atMs;
    opts.events.speechStart(this, atMs);
    // Whatever the speech turns out to be, recognition starts now on the utterance so far
    // (after a mid-sentence pause, from the first part's start).
    this.#openUpload();
  }

  /**
   * A new utterance begins at stream position `fromMs` (its pre-roll included), over the agent or
   * not (the session decides: speech after a pause may go on with the utterance before it).
   */
  beginUtterance(fromMs: number, overAgent: boolean): void {
    this.utteranceStartMs = Math.max(0, fromMs);
    this.#ownVoiceBefore = this.#voice.ownVoiceMs;
    this.#voicedBefore = this.#voice.voiced.voicedMs;
    this.#syllabicBefore = this.#voice.voiced.syllabicMs;
    this.#hints = overAgent ? OVER_AGENT : undefined;
  }

  /** The speech that ended at stream position `endMs`, as the pause profile weighs the silence after it. */
  speechBefore(endMs: number): SpeechBefore {
    return { ms: endMs - this.#speechStartMs, overAgent: this.#hints === OVER_AGENT };
  }

  /** The utterance being spoken, to stream position `toMs`, with its upload (takeUpload()). */
  utterance(toMs: number, upload: UtteranceUpload | undefined): Utterance {
    return { fromMs: this.utteranceStartMs, toMs, upload, hints: this.#hints };
  }

  #openUpload(): void {
    this.#upload?.abort();
    this.#upload = new UtteranceUpload(
      this.#o.asr.open(VAD_RATE, this.#o.signal, this.#hints),
      this.audio,
      this.utteranceStartMs,
      () => this.#o.clock.now(),
    );
  }

  push(frame: Int16Array): void {
    if (this.#closed) return;
    // Cleaned into the suppressor's buffer: the transport's frame (and so a recording) is what was sent.
    let pcm = this.#ns?.rate === this.#o.inputRate ? this.#ns.cleaned(frame) : frame;
    if (this.#resampler) {
      // One buffer per speaker: the window and the VAD both copy what they are given.
      // Frames are all 20 ms, so one buffer of exactly the output's size serves every frame
      // (pushInto writes outputLength samples) and no view is made per frame.
      const need = this.#resampler.outputLength(pcm.length);
      if (this.#upsampled.length !== need) this.#upsampled = new Int16Array(need);
      this.#resampler.pushInto(pcm, this.#upsampled);
      pcm = this.#upsampled;
      if (this.#ns?.rate === VAD_RATE && this.#ns.fits(pcm.length)) this.#ns.process(pcm);
    }
    this.#voice.frame(pcm, VAD_RATE);
    this.audio.write(pcm);
    if (this.#upload) {
      // In a loud room, sent once it is clear whether it is the speaker's (their speech ends up
      // to HANG_MS after their voice): then only theirs goes to the recognizer.
      this.#upload.holdBackMs = this.#voice.level.roomIsLoud() ? HANG_MS : 0;
      this.#upload.feed();
    }
    this.#detector.push(pcm);
    if (this.speaking) this.#watchPause();
    else this.#o.events.quietFrame(this, (pcm.length * 1000) / VAD_RATE);
  }

  /**
   * The upload ends as soon as the speaker has been silent EARLY_END_MS, not at speech-end
   * (minSilenceMs later): the service's transcript comes that much sooner, and the end of turn
   * is decided from speech-end as before. Should they go on, the whole utterance is sent again
   * (as after any pause) and the early transcript dropped unread.
   */
  #watchPause(): void {
    const upload = this.#upload;
    if (!upload) return;
    // A pause of the caller's own (caller-voice.ts): over a loud room, of their voice alone.
    const paused = this.#voice.pauseMs(this.#detector.pausedMs?.() ?? 0);
    if (!upload.ended) {
      const loud = this.#voice.overLoudRoom();
      if (paused < (loud ? EARLY_END_LOUD_MS : EARLY_END_MS)) return;
      if (loud) this.#keepToVoice(this.#voice.voiceHeardMs);
      void upload.end();
    } else if (paused === 0) {
      this.earlyEndsDropped++;
      this.#openUpload();
    }
  }

  /**
   * In a loud room what followed the speaker's voice (ended at `voiceEndMs`) is the room's: it is
   * not recognized (PocketSphinx, given an utterance that ends in another voice, answered with no
   * words), at the end of their speech or at an early end alike.
   */
  #keepToVoice(voiceEndMs: number): void {
    this.#upload?.capAt(voiceEndMs + END_PAD_MS);
  }

  /** Sound the VAD has not yet called speech: the speaker may be starting again. */
  onsetPending(): boolean {
    return !this.#closed && this.#voice.onsetPending(this.#detector.onsetPending());
  }

  /**
   * The speaker's own voice is sounding now (not only the detector's speech, which ends later): at
   * their level within the last `withinMs` (by default a stop's closure and more, caller-voice.ts).
   */
  voiceGoingOn(withinMs?: number): boolean {
    return this.#voice.goingOn(withinMs);
  }

  /** How long the speaker's own voice sounded in the utterance being spoken, ms (CallerVoice.ownVoiceMs). */
  ownVoiceInUtteranceMs(): number {
    return this.#voice.ownVoiceMs - this.#ownVoiceBefore;
  }

  /**
   * The utterance being spoken held a voice at the speaker's level in syllables, not only a noise
   * or a drone (SPOKE_MS, CallerVoice.voiced).
   */
  spokeInUtterance(): boolean {
    return this.#syllabicInUtteranceMs() >= SPOKE_MS && this.voiceInSyllables();
  }

  /** The voice in the utterance being spoken came in syllables, not as a drone (SYLLABIC_SHARE). */
  voiceInSyllables(): boolean {
    const voiced = this.#voice.voiced.voicedMs - this.#voicedBefore;
    return this.#syllabicInUtteranceMs() >= voiced * SYLLABIC_SHARE;
  }

  #syllabicInUtteranceMs(): number {
    return this.#voice.voiced.syllabicMs - this.#syllabicBefore;
  }

  /** How long the speaker's own voice has been silent, ms (0 where their voice is not judged). */
  voiceSilentMs(): number {
    return this.#voice.silentMs();
  }

  /** How much later than in a quiet room the speaker's onsets are heard over their room, ms. */
  onsetMaskMs(): number {
    return this.#voice.level.onsetMaskMs();
  }

  /** The speaker's level, the room's, how long the room's speech outlasted theirs, and re-sends. */
  levels(): CallerVoiceFigures {
    return { ...this.#voice.figures(), resentUtterances: this.earlyEndsDropped };
  }

  /** Pitch and level where the utterance ended at stream position `atMs`. */
  endProsody(atMs: number): EndProsody | undefined {
    return endProsody(this.audio.slice(Math.max(this.utteranceStartMs, atMs - PROSODY_MS), atMs));
  }

  /** Clock time at which something at stream position `atMs` happened. */
  clockAt(atMs: number): number {
    return this.#o.clock.now() - Math.max(0, this.audio.nowMs - atMs);
  }

  /** The utterance's upload, handed over at its end (undefined if there was none). */
  takeUpload(): UtteranceUpload | undefined {
    const upload = this.#upload;
    this.#upload = undefined;
    return upload;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    // The caller's level, learned over the call, is what the line's next calls are judged by.
    if (this.speaker === undefined)
      this.#o.line?.learn(this.#voice.level.callerDb, this.#voice.callerSpeechMs);
    this.#upload?.abort();
    this.#upload = undefined;
    this.#detector.close();
  }
}
