// Which of the speech the voice detector hears is the caller's own. Silero calls any voice speech:
// a talker across the room keeps it "in speech" for as long as they talk, which held callers'
// turns open for ever and stopped the agent at every word behind them. So between the detector
// and the session sits this gate: the caller's speech starts only where the detector hears speech
// AND the level is the caller's (caller-level.ts, caller-onset.ts), and it ends where the
// detector's speech ends or, while the room goes on talking, once nothing at the caller's level
// has been heard for HANG_MS, or nothing near their usual level for USUAL_LEVEL_GONE_MS
// (voice-end.ts): the end of the turn follows the end of the caller's own voice. A talker who
// began before the caller spoke is taken for them (nothing else has been heard) until the caller's
// nearer voice shows (nearer-voice.ts); but while the agent speaks, a voice far under the line's
// usual callers is not (line-level.ts).
//
// Levels are measured on every frame as it arrives (before the detector, whose events come later
// and refer back to stream positions), kept for a few seconds in a ring, and learned into the
// room's levels only once ROOM_DELAY_MS old, so that the onset of the caller's speech, which the
// detector calls 100–150 ms late, is not taken for the room before it is called the caller's
// (while the call connects they are learned at once: what is there then is taken for the room, a
// TV already going, until a voice among it proves to have been the caller's "Hello?": EARLY_GONE_MS).
// Until a frame with any sound in it has come (a line of digital silence, a
// test's scripted detector) there is nothing to judge, and the detector alone decides, as before.
// Allocates nothing per frame.
import { meanSquare, NO_SIGNAL_DB, powerDb, ShortLevel } from "../../codecs/level-tracker.ts";
import type { NearWindow } from "../../codecs/speech-segmenter.ts";
import type { CallLevels } from "../records/call-record.ts";
import { CallerFrames, type FrameMarks, SHORT_FRAMES } from "./caller-frames.ts";
import { CallerLevel } from "./caller-level.ts";
import { CallerOnset, LOOKBACK_MS, ONSET_LAG_MS } from "./caller-onset.ts";
import { type LineContext, LineHold } from "./line-level.ts";
import { NearerVoice } from "./nearer-voice.ts";
import { GOING_ON_MS, SOFT_MS, VoiceEnd } from "./voice-end.ts";
import { VoicePrint } from "./voice-print.ts";
import type { VoicedStretches } from "./voiced-stretches.ts";

export interface CallerVoiceEvents {
  /** The caller's own speech began at stream position `atMs`. */
  start(atMs: number): void;
  /** ...and ended at `atMs`. */
  end(atMs: number): void;
  /**
   * What was taken for the caller's speech so far was the room's: theirs (a far louder voice)
   * began at `atMs`, and the utterance starts there.
   */
  restart(atMs: number): void;
}

/** What the call's record and metrics keep of its levels. */
export type CallerVoiceFigures = CallLevels;

/** Frames are learned into the room's levels this long after they arrived (see above), ms. */
const ROOM_DELAY_MS = 300;
/**
 * For this long after the caller's speech ended, its resumption may begin softly (a pause
 * mid-sentence, as long as the longest wait for the end of a turn), ms.
 */
const RESUME_MS = 1200;
/**
 * Speech of the caller's at their level for less than this is a burst: if it stayed below their
 * level it was the room's loudest (see CallerLevel.roomBurst), ms.
 */
const BURST_MS = 350;

/**
 * Frames within this many of one in the caller's pitch at their onset level do not raise the
 * room's loudness (CallerLevel.clearDb), whether or not the detector heard speech there (200 ms
 * each side: their syllables and what lies between them). Silero misses a caller raising their
 * voice over a street, and the room's loudness, learning it, followed them up 7 dB in 300 ms: the
 * rest of "Wait, how much did you say?" stood no longer clear of the room. The room's other levels
 * still learn such frames: kept from them, a talker of the caller's pitch, taken for the caller
 * early in the call, was later kept from the room's peaks too, and held an interruption's onset.
 */
const THEIR_SPAN = 10;

/**
 * The detector's probability from which the call's first speech, begun after it connected, is a
 * voice, and need not stand over the peaks the room learned while the call connected
 * (CallerLevel.firstVoiceDb). Silero scored callers' first words over music 0.99–1.0, and music's
 * own stretches it called speech 0.55–0.92.
 */
const SURE_VOICE = 0.97;

/**
 * The voice heard as the call connected is learned as the room's (a TV already going), but a
 * caller may have said "Hello?" then. Once nothing the detector calls speech has come within
 * EARLY_AGAIN_DB of its loudest for EARLY_GONE_MS (longer than a talker pauses between sentences,
 * shorter than a greeting), it was no room that goes on talking: it is dropped from the room's
 * levels (CallerLevel.settleEarly), dB and ms.
 */
const EARLY_AGAIN_DB = 6;
const EARLY_GONE_MS = 2500;
/**
 * While the call connects, a frame this far over the median of the frames around it (two each
 * side) is a pop (a line's answer clicks, up to 20 ms): the room learns without it. Learned, a
 * pop of 8 ms set the room's voice peaks and loudness 20 dB over a caller whose first words then
 * went unheard. A voice's first syllable is no pop: the frames after it are as loud. A
 * television's consonant stood 11 dB over the frames around it; a pop of 8 ms, 6 dB under full
 * scale, 14 dB over a café 10 dB under the caller, dB.
 */
const POP_ABOVE_DB = 12;
/** Frames each side of a frame that tell whether it was a pop: so many later it is learned. */
const POP_SIDE_FRAMES = 2;

export class CallerVoice {
  readonly level = new CallerLevel();
  /** The caller is speaking (as far as the session is concerned). */
  speaking = false;
  readonly #enabled: boolean;
  readonly #events: CallerVoiceEvents;
  readonly #short = new ShortLevel(SHORT_FRAMES);
  readonly #frames = new CallerFrames();
  /** Where the caller's speech begins, by their level. */
  readonly #onset = new CallerOnset(this.#frames, this.level);
  /** What was found in the frame being added (one object, reused). */
  readonly #marks: FrameMarks = {
    mine: false,
    speech: false,
    nearVoiced: false,
    clearVoiced: false,
    theirVoice: false,
    softerTheirs: false,
    held: false,
  };
  /** The next frame the room's levels learn from. */
  #roomNext = 0;
  #nowMs = 0;
  /** A frame's length, ms (a call's frames are all alike). */
  #frameMs = 20;
  /** The last frame's own level (not smoothed), dBFS. */
  #rawDb = NO_SIGNAL_DB;
  /** A frame with sound in it has come: levels can be judged. */
  #heardSound = false;
  /** The detector hears speech, since `#vadStartMs`. */
  #vad = false;
  #vadStartMs = 0;
  /** The detector has called speech in this call. */
  #detectorHeard = false;
  /** Its speech now is the call's first, begun after the call connected, and not yet the caller's. */
  #firstSpeech = false;
  /**
   * Frames that began before this are the voice heard as the call connected (the detector's speech
   * begun then, to its end; +Infinity while it goes on), learned as the room's until settled; of
   * them, those more than SOFT_MS after it was last heard near its loudest are the room's whoever it
   * was (a talker going on behind a caller's "Hello?", the detector's speech for both).
   */
  #earlyEndMs = ROOM_DELAY_MS;
  /** When that voice was last heard (a frame of speech near its loudest). */
  #earlyHeardMs = 0;
  /** Where the last window the detector was sure of a voice in (SURE_VOICE) began. */
  #sureAtMs = Number.NEGATIVE_INFINITY;
  /** Where the caller's current speech began, and their last ended. */
  #startMs = 0;
  #stoppedAtMs = Number.NEGATIVE_INFINITY;
  /** Where the caller's speech was ended by level while the detector went on (undefined otherwise). */
  #endedByLevelAt: number | undefined;
  #roomHeldMs = 0;
  /** The caller's pitch. */
  readonly #print = new VoicePrint();
  readonly #nearer = new NearerVoice(this.level, this.#print);
  /** Where the caller's own voice stops inside the detector's speech. */
  readonly #voiceEnd = new VoiceEnd(this.level, this.#print);
  /** The line's hold on the caller's first voice while the agent speaks (line-level.ts). */
  readonly #line: LineHold;
  /** How long the line's level held a voice back, ms (the call's figures). */
  #lineHeldMs = 0;

  /** `enabled` false lets the detector's events through as they are (the levels are still kept). */
  constructor(enabled: boolean, events: CallerVoiceEvents, line: LineContext = {}) {
    this.#enabled = enabled;
    this.#events = events;
    this.#line = new LineHold(line);
  }

  /** A frame of the speaker's audio (any rate, in order), before the detector hears it. */
  frame(pcm: Int16Array, rate: number): void {
    const frameMs = (pcm.length * 1000) / rate;
    this.#frameMs = frameMs;
    this.#nowMs += frameMs;
    const power = meanSquare(pcm);
    this.#rawDb = powerDb(power);
    const db = this.#short.push(power);
    // Pitch is only ever asked for where the gate judges.
    if (this.#enabled) this.#print.frame(pcm, rate);
    const marks = this.#marks;
    marks.mine = this.speaking;
    marks.speech = this.#vad;
    marks.nearVoiced = this.#enabled && this.#isNearVoiced();
    marks.clearVoiced = this.#enabled && this.#theirVoiceAt(this.level.clearDb());
    marks.theirVoice = this.#enabled && !this.#connecting() && this.#theirVoiceAt(this.level.onsetDb());
    // Only a frame that may start the caller's speech under their onset level needs its pitch found.
    marks.softerTheirs =
      this.#enabled && !marks.mine && !marks.theirVoice && !this.#connecting() && this.#softerTheirs();
    // A voice only the line's level holds back may be a caller softer than the line's usual ones:
    // it is learned as the room's as the voice heard as the call connected is, and dropped as that is.
    // Once one of its frames is held, the detector's speech is, from its start.
    const held =
      this.#enabled && this.#vad && !this.speaking && this.#line.holds()
        ? this.#line.frame(db, this.#barDb())
        : "no";
    if (held === "first") this.#frames.markHeld(this.#roomNext, this.#vadStartMs);
    marks.held = held !== "no";
    if (marks.held) {
      this.#earlyHeardMs = this.#nowMs;
      this.#lineHeldMs += frameMs;
    }
    this.#frames.add(db, power, this.#nowMs, marks);
    this.#learnRoom();
    // Only speech heard as the call connected may have been the caller's (a chord or a lorry then is no "Hello?").
    if (
      (this.#earlyEndMs > ROOM_DELAY_MS || this.#line.voice) &&
      this.level.earlyDb > NO_SIGNAL_DB &&
      !this.speaking
    )
      this.#watchEarlyVoice();
    if (db > NO_SIGNAL_DB) {
      this.#heardSound = true;
      this.level.heard(db);
    }
    if (this.speaking) this.#whileSpeaking(db);
    else this.#whileSilent(db);
  }

  /** The detector heard speech begin at `atMs`. */
  vadStart(atMs: number): void {
    this.#vad = true;
    this.#vadStartMs = atMs;
    // Only one whose look-back for its onset lies wholly after the call connected: a talker already
    // talking then, called speech by the detector only at 352 ms, had set the peaks it learned.
    const connected = atMs - LOOKBACK_MS > ROOM_DELAY_MS;
    if (!this.#detectorHeard && !connected) this.#earlyEndMs = Number.POSITIVE_INFINITY;
    this.#firstSpeech = !this.#detectorHeard && connected;
    this.#detectorHeard = true;
    this.#endedByLevelAt = undefined;
    if (!this.#judges()) {
      this.#start(atMs, NO_SIGNAL_DB);
      return;
    }
    // While the call connects, whatever sounds is the room's (see #learnRoom).
    if (this.#connecting()) return;
    // Its onset was called late: look back over the frames since for the caller's level.
    const onset = this.#onset.lookBack(atMs, this.#onsetDb(), this.#resuming());
    if (onset) this.#start(onset.atMs, onset.db);
    // Else nothing at the caller's level yet: the frames to come decide.
  }

  /** The detector heard speech end at `atMs`. */
  vadEnd(atMs: number): void {
    this.#vad = false;
    this.#firstSpeech = false;
    this.#line.speechEnded();
    // To the end as reported: the frames until then were marked the detector's speech (and the
    // short level carries the voice's last for its window past the end the detector placed).
    if (this.#earlyEndMs === Number.POSITIVE_INFINITY) this.#earlyEndMs = this.#nowMs;
    this.#onset.restart();
    this.#nearer.restartRun();
    if (this.#endedByLevelAt !== undefined) this.#roomHeldMs += Math.max(0, atMs - this.#endedByLevelAt);
    this.#endedByLevelAt = undefined;
    // Speech the detector calls over before the caller's began was the room's (the caller's
    // onset came inside it): theirs goes on, until the detector's next speech ends or the hang.
    if (this.speaking && !(this.#judges() && atMs <= this.#startMs)) this.#end(atMs);
  }

  /**
   * Whether the caller may be starting to speak: in a loud room, outside the detector's speech what
   * it calls a possible onset if it is loud enough to be theirs, inside it (the room talking) a
   * frame loud enough to be theirs; in a quiet room, what the detector says.
   */
  onsetPending(detectorPending: boolean): boolean {
    if (!this.#judges()) return detectorPending;
    if (this.speaking) return false;
    // In a quiet room the detector's word stands: an onset's first sound (a stop's burst, a
    // breath) is soft, and waiting for it to reach the caller's level is answering over them.
    if (!this.level.roomIsLoud()) return detectorPending;
    // The frame's own level: the short one lags an onset by up to its window.
    return (
      (this.#vad || detectorPending) && this.#rawDb >= Math.min(this.level.continueDb(), this.#onsetDb())
    );
  }

  /**
   * Whether the stretch [startMs, endMs) of the audio stands out as a near voice over a loud room
   * (CallerLevel.nearDb): Silero scores a voice under a café's or a street's noise lower than in
   * quiet, a caller 10 dB over it 0.3–0.44, under its threshold, and their question went unheard.
   * "clear" when most of its frames are a voice of the caller's pitch clear of a room that seldom
   * sounds like one (CallerLevel.clearDb): the detector takes it for speech however it scored it.
   * The detector asks this of each window it decides (VoiceActivityOptions.near), whose frames
   * have all come by then, with its `probability` for it.
   */
  near(startMs: number, endMs: number, probability = 0): NearWindow {
    if (probability >= SURE_VOICE) this.#sureAtMs = startMs;
    if (!this.#judges() || this.#connecting()) return false;
    let sum = 0;
    let n = 0;
    let voiced = false;
    let clear = 0;
    const f = this.#frames;
    for (let i = f.written - 1; i >= f.oldest; i--) {
      if (f.endMs(i) <= startMs) break;
      if (f.startMs(i) >= endMs) continue;
      sum += f.power(i);
      n++;
      if (f.nearVoiced(i)) voiced = true;
      if (f.clearVoiced(i)) clear++;
    }
    if (n === 0) return false;
    const db = powerDb(sum / n);
    // Frames clear of the room are voiced (their pitch); the near test's quiet room is judged by
    // its median, which a bursty one (a street between its lorries) leaves far under a caller.
    if (clear * 2 > n && this.level.clearOfRoom(db)) return "clear";
    if (!voiced) return false;
    return db >= this.level.nearDb(db);
  }

  /**
   * The last frame is at a near voice's level and voiced: a cough or a door as loud is not a voice.
   * The pitch is found only for such frames (YIN costs 5–15 µs a frame).
   */
  #isNearVoiced(): boolean {
    return this.#rawDb >= this.level.nearDb(this.#rawDb) && !Number.isNaN(this.#print.pitch());
  }

  /**
   * The last frame is at the caller's softer level (CallerLevel.softerDb), a voice's (not a noise:
   * VoicePrint.aperiodic) and not of another pitch than theirs. Under a pink noise 10 dB down YIN
   * found no pitch in most frames of a caller's "wait", so a voice of no pitch found passes; so
   * does any voice before their pitch is known (a short first question leaves it unknown): a new
   * voice in a quiet room is then theirs, as the call's first voice is.
   */
  #softerTheirs(): boolean {
    if (this.#rawDb < this.level.softerDb() || this.#print.aperiodic()) return false;
    return !this.#print.known || this.#print.whose() !== "other";
  }

  /** The last frame is at `barDb` or above and voiced in the caller's pitch. */
  #theirVoiceAt(barDb: number): boolean {
    return this.#print.known && this.#rawDb >= barDb && this.#print.whose() === "theirs";
  }

  /**
   * The caller's voice is sounding now: they are speaking and were at their level within the last
   * `withinMs` (GOING_ON_MS; the detector calls the end of speech later, ~300 ms after the voice
   * stops), in a frame with some period in it (not a noise as loud, VoicePrint.aperiodic).
   */
  goingOn(withinMs = GOING_ON_MS): boolean {
    if (!this.#judges() || !this.speaking) return this.speaking;
    return this.#voiceEnd.goingOn(this.#nowMs, withinMs);
  }

  /**
   * How long the caller's voice has been silent, ms: since their last frame at their soft level in
   * their speech (as `pauseMs` over a loud room), 0 where it is not judged (the detector alone says).
   */
  silentMs(): number {
    if (!this.#judges()) return 0;
    return this.#voiceEnd.silentMs(this.#nowMs);
  }

  /**
   * How long the caller has paused in their speech, ms (0 while they sound), given the detector's
   * pause. Where the caller's voice is judged, a pause is one both hear: the detector's may be a
   * gap in the room's talk under the caller's words. In a loud room the room keeps the detector in
   * speech, so the caller's voice alone says: quiet at every level that keeps their speech going
   * (their soft level, in their own pitch), as their speech is ended after HANG_MS of it.
   */
  pauseMs(detectorPausedMs: number): number {
    if (!this.#judges()) return detectorPausedMs;
    if (!this.speaking) return 0;
    if (this.level.roomIsLoud()) return this.silentMs();
    return Math.min(detectorPausedMs, this.#voiceEnd.quietMs(this.#nowMs));
  }

  /** Where the caller's voice was last heard in their speech (stream ms): at their soft level. */
  get voiceHeardMs(): number {
    return this.#voiceEnd.heardMs;
  }

  /** Whether the caller's voice is told from a loud room's by its level (pauseMs is theirs alone). */
  overLoudRoom(): boolean {
    return this.#judges() && this.level.roomIsLoud();
  }

  /**
   * How long the caller's own voice has sounded in their speech over the call, ms: frames at their
   * level, voiced, in their pitch once it is known (0 where the voice is not judged). Noise has no
   * pitch; a room's voice is of another pitch, or softer.
   */
  get ownVoiceMs(): number {
    return this.#voiceEnd.ownFrames * this.#frameMs;
  }

  /**
   * A voice in the caller's speech over the call: as ownVoiceMs, and also before their pitch is
   * known, in the stretches it came in (none where the voice is not judged).
   */
  get voiced(): VoicedStretches {
    return this.#voiceEnd.voiced;
  }

  /** How much of the caller's speech their level was learned from, ms. */
  get callerSpeechMs(): number {
    return this.level.callerFrames * this.#frameMs;
  }

  figures(): CallerVoiceFigures {
    const held = this.#endedByLevelAt === undefined ? 0 : Math.max(0, this.#nowMs - this.#endedByLevelAt);
    const round = (v: number) => Math.round(v * 10) / 10;
    const { callerDb, roomDb } = this.level;
    const { lineDb } = this.#line;
    return {
      ...(Number.isFinite(callerDb)
        ? { callerDb: round(callerDb), callerSpeechMs: Math.round(this.callerSpeechMs) }
        : {}),
      ...(Number.isFinite(roomDb) ? { noiseDb: round(roomDb) } : {}),
      roomHeldMs: Math.round(this.#roomHeldMs + held),
      ...(lineDb !== undefined ? { lineDb: round(lineDb), lineHeldMs: Math.round(this.#lineHeldMs) } : {}),
    };
  }

  #whileSpeaking(db: number): void {
    if (!this.#judges()) {
      this.#voiceEnd.heardNow(this.#nowMs);
      return;
    }
    if (this.#line.trial(this.#rawDb, this.#nowMs, this.goingOn()) === "room") {
      this.#tookRoomVoice();
      return;
    }
    this.#voiceEnd.loud(this.#nowMs, this.#rawDb, this.#frameMs);
    // A nearer voice than the one taken for the caller: that one was the room's.
    const from = this.#nearer.frame(db, this.#rawDb, this.#nowMs, this.#frames.written - 1);
    if (from !== undefined)
      this.#events.restart(Math.max(this.#vadStartMs, this.#frames.startMs(from) - ONSET_LAG_MS));
    if (db > NO_SIGNAL_DB) this.level.caller(db);
    const end = this.#voiceEnd.stoppedAt(this.#nowMs, db, this.#rawDb);
    if (end === undefined) return;
    // The room goes on, and what came after the caller's voice stopped is the room's to learn from.
    if (this.#vad) this.#endedByLevelAt = end;
    this.#frames.markMine(this.#roomNext, end, false);
    this.#end(end);
  }

  #whileSilent(db: number): void {
    this.level.callerSilent();
    if (!this.#judges()) return;
    const vadStartMs = this.#vad ? this.#vadStartMs : undefined;
    const onset = this.#onset.frame(db, vadStartMs, this.#onsetDb(), this.#resuming());
    if (onset && !this.#connecting()) this.#start(onset.atMs, onset.db);
  }

  #start(atMs: number, onsetDb: number): void {
    if (this.speaking) return;
    this.speaking = true;
    this.#line.started(atMs);
    this.#startMs = atMs;
    this.#firstSpeech = false;
    this.#onset.restart();
    this.#voiceEnd.heardNow(this.#nowMs);
    this.#nearer.restartRun();
    // The caller has spoken: a voice heard as the call connected was the room's.
    this.level.settleEarly(true);
    if (this.#judges() && this.level.onset(onsetDb)) this.#nearer.reset();
    this.level.speechStarted();
    // The frames from the onset on are the caller's: the room must not learn them.
    this.#frames.markMine(this.#roomNext, atMs, true);
    this.#events.start(atMs);
  }

  /**
   * The first voice, taken for the caller's while the line held, was the room's (LineHold.trial):
   * their speech ends, the room learns that voice (its loudest among its peaks: the same talk does
   * not start their speech again at its next loud syllable), and their level is learned anew.
   */
  #tookRoomVoice(): void {
    this.level.otherVoice(this.#frames.loudestSince(this.#startMs));
    this.#nearer.reset();
    this.#frames.markMine(this.#roomNext, this.#startMs, false);
    this.#end(this.#nowMs);
  }

  #end(atMs: number): void {
    this.speaking = false;
    this.#stoppedAtMs = this.#nowMs;
    this.#onset.restart();
    if (this.#judges() && this.#voiceEnd.loudEndMs - this.#startMs < BURST_MS)
      this.level.roomBurst(this.#frames.loudestSince(this.#startMs));
    this.#events.end(atMs);
  }

  /**
   * The level that starts the caller's speech now: right after they stopped, their resumption
   * (softer onsets pass: the rest of a sentence after a pause); in the call's first speech, once
   * the detector is sure of a voice in it, a level that may be lower (CallerLevel.firstVoiceDb);
   * else their onset level. While the line holds (the agent speaks, nobody heard yet), no lower
   * than the line's bar, and no higher than a little over its usual caller (LineHold.bar).
   */
  #onsetDb(): number {
    return this.#line.bar(this.#barDb());
  }

  /** The level that starts the caller's speech now, the line's aside. */
  #barDb(): number {
    if (this.#firstSpeech && this.#sureAtMs >= this.#vadStartMs) return this.level.firstVoiceDb();
    return this.#resuming() ? this.level.resumeDb() : this.level.onsetDb();
  }

  /** Within RESUME_MS of the end of the caller's speech: what begins may be the rest of it. */
  #resuming(): boolean {
    return this.#nowMs - this.#stoppedAtMs <= RESUME_MS;
  }

  /** The gate is on and has sound to judge. */
  #judges(): boolean {
    return this.#enabled && this.#heardSound;
  }

  /**
   * The call's first ROOM_DELAY_MS, with sound in them: what is heard before anyone could have
   * answered the call is the room (a talker, a TV already going), its peaks learned at once.
   */
  #connecting(): boolean {
    return this.#nowMs <= ROOM_DELAY_MS && this.#rawDb > NO_SIGNAL_DB;
  }

  /**
   * The voice heard as the call connected, learned as the room's: while it goes on, or the
   * detector hears speech near its loudest, it may be a room that talks on; gone for EARLY_GONE_MS,
   * it was not, and it is dropped, as if it had never sounded (a next voice is the call's first).
   */
  #watchEarlyVoice(): void {
    if (this.#connecting() || (this.#vad && this.#rawDb >= this.level.earlyDb - EARLY_AGAIN_DB)) {
      this.#earlyHeardMs = this.#nowMs;
    } else if (this.#nowMs - this.#earlyHeardMs >= EARLY_GONE_MS) {
      this.level.settleEarly(false);
      this.#detectorHeard = false;
      this.#line.dropped();
    }
  }

  /**
   * The room learns each frame once it is ROOM_DELAY_MS old; while the call connects, as soon as the
   * POP_SIDE_FRAMES after it have come (they tell a pop).
   */
  #learnRoom(): void {
    const f = this.#frames;
    while (this.#roomNext < f.written) {
      const i = this.#roomNext;
      const connecting = f.endMs(i) <= ROOM_DELAY_MS;
      if (connecting ? f.written - 1 < i + POP_SIDE_FRAMES : f.endMs(i) > this.#nowMs - ROOM_DELAY_MS) break;
      // While the call connects, its short level without the pops in its window.
      const db = connecting ? f.levelWithoutPops(i, SHORT_FRAMES, POP_SIDE_FRAMES, POP_ABOVE_DB) : f.db(i);
      if (!f.mine(i) && db > NO_SIGNAL_DB) {
        const clear = f.clearVoiced(i) || f.nearTheirVoice(i, THEIR_SPAN);
        this.level.room(
          db,
          connecting || f.speech(i),
          clear,
          connecting,
          f.held(i) || f.startMs(i) < Math.min(this.#earlyEndMs, this.#earlyHeardMs + SOFT_MS),
        );
      }
      this.#roomNext++;
    }
  }
}
