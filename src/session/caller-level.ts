// How loud the caller is, and how loud the room behind them: the levels a sound is judged
// against to be taken for the caller's own voice. On a phone the caller is the near, loud voice; a
// talker across the room, a TV, traffic or music reach the microphone well below it. So from the
// short running level of every frame (codecs/level-tracker.ts) this keeps
//   the caller's level  the median level of the caller's own speech, learned as they talk;
//   the room's level    the median of everything else (the call's noise level);
//   the room's peaks    the loudest of the room's voices (what the detector called speech and
//                       was not the caller's), fading slowly: how loud the room's talk gets
//                       (and its 90th percentile: how loud it usually is);
//   the floor           the lowest level of the last three seconds: a sound that never lets up
//                       (an engine, a crowd) becomes the floor, however loud.
// A sound starts the caller's speech only above the room's peaks and the floor (by margins) and,
// once the caller has been heard, no more than ONSET_BELOW_DB under their level; their speech goes
// on while it stays above a lower level (continueDb: above the room's usual loudness, within
// CONTINUE_BELOW_DB of theirs; a little while longer within SOFT_BELOW_DB, softDb). Before anyone
// has spoken the room alone decides, so the first caller onset in a quiet room passes as it did.
import { MinimumTracker, QuantileTracker } from "../../codecs/level-tracker.ts";
import { ROOM_KNOWN_FRAMES, RoomLevels } from "./room-levels.ts";

/** How far above the room's peaks a sound must be to be the caller's, dB. */
export const ROOM_MARGIN_DB = 3;
/**
 * ...and further, while the room has been heard only briefly: peaks learned from a second of a
 * crowd are short of the louder moments the next seconds bring. This extra margin fades over the
 * first ROOM_KNOWN_FRAMES frames learned (3 s), dB.
 */
const EARLY_ROOM_MARGIN_DB = 3;
/**
 * ...and above the floor, dB: a voice swings 15–25 dB between its dips and its peaks, a steady
 * noise a few dB.
 */
export const FLOOR_MARGIN_DB = 9;
/** The caller's speech starts no more than this far below their level, dB. */
export const ONSET_BELOW_DB = 4;
/** Their speech goes on while no more than this far below it, dB (the room permitting). */
export const CONTINUE_BELOW_DB = 10;
/**
 * ...and for a while (caller-voice.ts SOFT_MS) while no more than this far below: a caller's own
 * last word is often softer than the rest; a talker behind them goes on for seconds, dB.
 */
export const SOFT_BELOW_DB = 15;
/**
 * An onset this much louder than the caller's level (their median; their own onsets peak ~5 dB
 * above it) is a nearer, louder voice: the one taken for the caller so far (the room, heard before
 * the caller spoke) was the room's, dB.
 */
export const LOUDER_VOICE_DB = 12;
/**
 * A room the detector calls speech in fewer than this share of its frames (music, traffic, a
 * hum: not a talker) seldom passes for a voice: the caller's resumption need only stand above its
 * usual loudness, not its peaks (resumeDb).
 */
const ROOM_SELDOM_VOICE = 0.25;
/**
 * Over a room that seldom sounds like a voice (a street, music), a voiced sound of the caller's
 * pitch this far above the room's loudness (the 95th percentile of all its frames) and its voices'
 * peaks is theirs whatever the detector scores it (clearDb), dB. Silero scored callers raising
 * their voice over a street (10 dB) 0.05–0.14, and their interruptions went unheard; a talker is
 * not a room that seldom sounds like a voice, and a horn or a siren is not of the caller's pitch.
 * The held-out flite caller interrupting over a street 10 dB down stood 9–11 dB over its loudness.
 */
const CLEAR_ABOVE_DB = 8;
/**
 * Under their onset level, a voice in the caller's own pitch is still theirs down to this far
 * under their level (softerDb), dB...
 */
const SOFTER_BELOW_DB = 10;
/**
 * ...where the room is quiet against it: its loudness and its voices' peaks this far under it or
 * more, dB. One caller's utterances differ by several dB: a "wait" after a loud question, 4 dB
 * softer than it, was heard half a second late, and 6 dB softer not at all, over a room 40 dB
 * under them; the room then learned the unheard word as its own voice's peak. 8 dB here left a
 * caller 6 dB softer over a café or a street 16 dB under their question unheard.
 */
const SOFTER_QUIET_ROOM_DB = 6;
/** A room whose usual loudness is this far below the caller or more is a quiet one, dB. */
const QUIET_ROOM_DB = 20;
/**
 * A sound stands out as a near voice (see nearDb) this far above the onset level while the
 * caller's own is unknown, dB...
 */
const NEAR_ABOVE_ONSET_DB = 3;
/** ...and over a room whose median is no more than this far under the sound, dB. */
const NEAR_ROOM_WITHIN_DB = 20;
/** The caller's level learns from their frames no more than this far below it, dB. */
const LEARN_BELOW_DB = 6;
/**
 * While the caller is silent their level fades by this much per frame (0.1 dB/s at 20 ms frames),
 * no lower than CALLER_OVER_ROOM_DB above the room's peaks: a caller who moves the phone away
 * is heard again in time, and a room that never lets up is still kept out by its own peaks.
 */
const CALLER_FADE_DB_PER_FRAME = 0.002;
const CALLER_OVER_ROOM_DB = 6;
/**
 * A caller's onset is heard later over a loud room: its first sounds (a fricative, a soft vowel)
 * are under the room's, and neither the detector nor the level hears them. In a caller's pause
 * that lateness reads as a longer silence than there was, and the end of their turn was called in
 * pauses they were already going on after (café and street at 10 dB: 60–150 ms late). So for
 * each dB the caller stands less than MASK_FREE_DB above the room's median, the wait for the end
 * of their turn is MASK_MS_PER_DB longer, up to MASK_MAX_MS; or, if it comes to more, for each dB
 * they stand less than MASK_LOUD_FREE_DB above its loudness (the 95th percentile of its frames,
 * 3–5 dB over a steady room's median). A room that sounds now and then (a bus going by, a shop's
 * announcements) masks an onset whenever it sounds, but its median, set by the quiet between, lay
 * 20 dB under callers whose longest pauses the gate heard 70–860 ms longer than they were (the
 * bus at 6 dB, the announcements at 10).
 */
const MASK_FREE_DB = 26;
const MASK_LOUD_FREE_DB = 22;
const MASK_MS_PER_DB = 10;
const MASK_MAX_MS = 130;
/**
 * The caller's level at its highest in their speech fades by this much per frame (2.5 dB/s): their
 * level follows a voice that softens as they go on, not a sound swelling under it in a second.
 */
const SPEECH_TOP_FADE_DB_PER_FRAME = 0.05;
/** The floor's window, frames (3 s of 20 ms frames): longer than a caller talks without a breath's pause. */
const FLOOR_FRAMES = 150;

export class CallerLevel {
  /** The caller's speech: its median, following a change at ~0.5 dB per frame. */
  readonly #caller = new QuantileTracker(0.5, 1);
  /** The room's levels (room-levels.ts). */
  readonly #room = new RoomLevels();
  /**
   * ...learned without the voice heard as the call connected, until that voice is settled
   * (settleEarly): it may have been the caller's own "Hello?".
   */
  #roomSinceEarly: RoomLevels | undefined = new RoomLevels();
  /** The loudest frame of that voice, dBFS (−Infinity if none, or once settled). */
  #earlyDb = Number.NEGATIVE_INFINITY;
  readonly #floor = new MinimumTracker(FLOOR_FRAMES);
  /** Frames the caller's level has learned from since it was last learned anew. */
  #callerFrames = 0;
  /** The caller's level at its highest in their current speech (speechStarted()), fading. */
  #speechTopDb = Number.NEGATIVE_INFINITY;
  /** A voice of the room was taken for the caller's, until a louder one showed it (onset()). */
  #roomTookFor = false;

  /** The caller's speech level, dBFS (−Infinity until they have been heard). */
  get callerDb(): number {
    return this.#caller.value;
  }

  /** The room's median level: the call's noise level, dBFS (−Infinity until anything was heard). */
  get roomDb(): number {
    return this.#room.median.value;
  }

  /** How loud the room's voices get: their loudest level, fading, dBFS. */
  get roomPeakDb(): number {
    return this.#room.peaks.value;
  }

  /** The share of the room's recent frames the detector called speech (0–1). */
  get roomVoiceShare(): number {
    return this.#room.voiceShare;
  }

  /** The room seldom sounds like a voice (music, traffic, a hum: not a talker). */
  get roomSeldomVoice(): boolean {
    return this.#room.voiceShare < ROOM_SELDOM_VOICE;
  }

  /** Every frame's level, whoever made it. */
  heard(db: number): void {
    this.#floor.push(db);
  }

  /**
   * A frame's level that was not the caller's (`connecting`: heard as the call connected, a voice's
   * or not). Only a room's voice (`voice`: the detector heard speech in it) raises its peaks and
   * its usual loudness: a passing lorry or a drum is no voice, the detector tells it from the
   * caller's own, and it must not raise the bar their voice has to reach. Nor does a frame `clear`
   * of it (clearDb), or by the caller's voice (caller-voice.ts, THEIR_SPAN), raise its loudness: a
   * caller raising their voice over a street is seldom heard by the detector, and the frames the
   * gate did not take for theirs raised the bar by 13 dB in 300 ms. `early`: the frame is of the
   * voice heard as the call connected (see settleEarly).
   */
  room(db: number, voice = true, clear = false, connecting = false, early = connecting): void {
    this.#room.learn(db, voice, clear, connecting);
    const since = this.#roomSinceEarly;
    if (!since) return;
    if (!early) since.learn(db, voice, clear, connecting);
    else if (voice && db > this.#earlyDb) this.#earlyDb = db;
  }

  /**
   * The loudest frame of the voice heard as the call connected, while it is still unsettled whose
   * it was (settleEarly), dBFS; −Infinity otherwise.
   */
  get earlyDb(): number {
    return this.#earlyDb;
  }

  /**
   * Whose was the voice heard as the call connected, learned as the room's (`early` frames)? The
   * room's (`wasRoom`): it stays learned. Else it is dropped: the room's levels become what was
   * learned without it, as if it had never sounded. A caller who says "Hello?" as the call connects
   * and then listens to the greeting is not the room: learned as its peaks, their "Hello?" barred
   * every word of theirs at the same level, and they went unheard for the rest of the call.
   */
  settleEarly(wasRoom: boolean): void {
    const since = this.#roomSinceEarly;
    if (!since) return;
    this.#earlyDb = Number.NEGATIVE_INFINITY;
    if (wasRoom) {
      this.#roomSinceEarly = undefined;
      return;
    }
    // Still nobody heard: a voice held back later (caller-voice.ts, the line's level) is watched the same way.
    this.#room.copyFrom(since);
  }

  /**
   * A short burst taken for the caller's that stayed below their level (loudest at `db`): the
   * room's loudest syllable, as a talker behind them reaches now and then. The room's peaks learn
   * it (its frames were kept from them as the caller's), so the same talker does not pass again.
   */
  roomBurst(db: number): void {
    if (this.#caller.known && db < this.#caller.value) this.#room.peaks.push(db);
  }

  /**
   * The caller's speech began at level `db` (its loudest at the onset): a voice far louder than
   * the one taken for the caller so far shows that one was the room's. True if it did (their
   * level is learned anew).
   */
  onset(db: number): boolean {
    if (!this.#caller.known || db < this.#caller.value + LOUDER_VOICE_DB) return false;
    this.otherVoice();
    return true;
  }

  /**
   * The voice taken for the caller's so far was the room's: theirs is another (caller-voice.ts).
   * `loudestDb`: that voice's loudest frame, when it is known, for the room's peaks.
   */
  otherVoice(loudestDb = Number.NEGATIVE_INFINITY): void {
    if (!this.#caller.known) return;
    this.#room.peaks.push(Math.max(this.#caller.value, loudestDb));
    this.#room.loud.atLeast(this.#caller.value);
    this.#caller.reset();
    this.#callerFrames = 0;
    this.#speechTopDb = Number.NEGATIVE_INFINITY;
    this.#roomTookFor = true;
    // The room is known now: from all the frames its voice was taken for the caller's.
    this.#room.frames = ROOM_KNOWN_FRAMES;
  }

  /** A frame's level while the caller spoke: their level learns from what stands above the room. */
  caller(db: number): void {
    if (this.#caller.known) this.#speechTopDb -= SPEECH_TOP_FADE_DB_PER_FRAME;
    if (this.#caller.known && db < this.#learnFloorDb()) return;
    this.#caller.push(db);
    this.#callerFrames++;
    if (this.#caller.value > this.#speechTopDb) this.#speechTopDb = this.#caller.value;
  }

  /** The caller's speech began: their level may fall in it only so far (#learnFloorDb). */
  speechStarted(): void {
    this.#speechTopDb = this.#caller.value;
  }

  /** Frames the caller's level has learned from since it was last learned anew. */
  get callerFrames(): number {
    return this.#callerFrames;
  }

  /** A frame passed without the caller speaking. */
  callerSilent(): void {
    this.#caller.relax(CALLER_FADE_DB_PER_FRAME, this.#room.peaks.value + CALLER_OVER_ROOM_DB);
  }

  /**
   * The room talks within QUIET_ROOM_DB of the caller (its voices' usual loudness), or, before
   * the caller's level is known again, a voice of the room was taken for theirs.
   */
  roomIsLoud(): boolean {
    if (!this.#caller.known) return this.#roomTookFor;
    return this.#room.loud.value >= this.#caller.value - QUIET_ROOM_DB;
  }

  /**
   * The level a sound must reach to start the caller's speech again right after they stopped (a
   * pause mid-sentence, and the rest of it often begins softly): their soft level, the room's
   * peaks permitting (at most onsetDb), dBFS. Over a room the detector seldom calls speech, the
   * level that keeps a soft last word of theirs going (softDb: the room's usual loudness, not its
   * peaks): what the detector calls speech there is rarely the room, and a resumption under
   * music's loudest chords was heard only at its stressed syllable, half a second late, after the
   * wait for the end of the turn had run out (music at 10 dB).
   */
  resumeDb(): number {
    if (!this.#caller.known) return this.onsetDb();
    if (this.roomSeldomVoice) return this.softDb();
    const room = this.#room.peaks.value + this.#roomMargin();
    return Math.min(this.onsetDb(), Math.max(room, this.#caller.value - SOFT_BELOW_DB, this.#steadyDb()));
  }

  /** How much later than in a quiet room an onset of the caller's is heard over this one, ms. */
  onsetMaskMs(): number {
    const room = this.#room;
    if (!this.#caller.known || !room.median.known) return 0;
    const c = this.#caller.value;
    // (The loudness is unknown, −Infinity, while every frame of the room's was clear of it.)
    const under = Math.max(MASK_FREE_DB - (c - room.median.value), MASK_LOUD_FREE_DB - (c - room.all.value));
    return Math.round(Math.min(MASK_MAX_MS, Math.max(0, under * MASK_MS_PER_DB)));
  }

  /** The level a sound must reach to start the caller's speech, dBFS. */
  onsetDb(): number {
    const room = this.#room.peaks.value + this.#roomMargin();
    const c = this.#caller.value;
    // However loud the room's peaks, half the caller's own speech still reaches the onset level;
    // but nothing that never lets up does.
    const voice = this.#caller.known ? Math.min(c, Math.max(room, c - ONSET_BELOW_DB)) : room;
    return Math.max(voice, this.#steadyDb());
  }

  /**
   * The level down to which a voice not of another pitch than the caller's, under their onset
   * level, starts their speech: SOFTER_BELOW_DB under their level, where the room (its loudness,
   * its voices' peaks) is SOFTER_QUIET_ROOM_DB under the sound or more; +Infinity before they are
   * heard, dBFS. A new voice in a quiet room is theirs unless its pitch says otherwise.
   */
  softerDb(): number {
    if (!this.#caller.known) return Number.POSITIVE_INFINITY;
    const room = Math.max(this.#room.all.value, this.#room.peaks.value) + SOFTER_QUIET_ROOM_DB;
    return Math.max(this.#caller.value - SOFTER_BELOW_DB, room, this.#steadyDb());
  }

  /**
   * The level at which a sound stands out as a near voice over a loud room (the caller's, at
   * their level or, before it is known, well above the room's peaks), dBFS; +Infinity in a room
   * quiet against `db` (NEAR_ROOM_WITHIN_DB), where no voice needs telling apart.
   */
  nearDb(db: number): number {
    const room = this.#room.median;
    if (!room.known || room.value < db - NEAR_ROOM_WITHIN_DB) return Number.POSITIVE_INFINITY;
    return this.#caller.known ? this.onsetDb() : this.onsetDb() + NEAR_ABOVE_ONSET_DB;
  }

  /**
   * The level at which a voiced sound of the caller's pitch is theirs whatever the detector scores
   * it: CLEAR_ABOVE_DB over the room's loudness and its voices' peaks, and at least their onset
   * level, once the room is known and seldom sounds like a voice and the caller has been heard;
   * +Infinity otherwise, dBFS.
   */
  clearDb(): number {
    if (!this.#caller.known || !this.roomSeldomVoice || this.#room.frames < ROOM_KNOWN_FRAMES)
      return Number.POSITIVE_INFINITY;
    return Math.max(
      this.#room.all.value + CLEAR_ABOVE_DB,
      this.#room.peaks.value + CLEAR_ABOVE_DB,
      this.onsetDb(),
    );
  }

  /**
   * A window at `db`, mostly frames clear of the room (clearDb), stands clear of it: the room's
   * loudness, not its median, within NEAR_ROOM_WITHIN_DB of it. A street's median lies far under a
   * caller between its lorries, where Silero still scored their interruption 0.05–0.39.
   */
  clearOfRoom(db: number): boolean {
    return db >= this.clearDb() && this.#room.all.value >= db - NEAR_ROOM_WITHIN_DB;
  }

  /**
   * The level a voice the detector is sure of must reach to start the caller's speech when it is
   * the call's first, begun after the call connected: at most the onset level, and no more than
   * FLOOR_MARGIN_DB over the quietest the room has been (as over a steady room), or over the peaks
   * of what the detector has called speech since (a talker it has heard for a while), dBFS. Not
   * necessarily over the peaks of what sounded while the call connected: those frames are all
   * taken for a voice's in case a talker was already going (caller-voice.ts #learnRoom), and with
   * no speech there they were music's opening chord or a lorry. A caller's first syllable 3–6 dB
   * over such a chord stood under the bar, the room learned it as its own voice's peak, and the
   * rest of their interruption went unheard (music at 10 dB).
   */
  firstVoiceDb(): number {
    const quietest = this.#floor.lowest + FLOOR_MARGIN_DB;
    return Math.min(this.onsetDb(), Math.max(this.#room.heardPeaks.value + this.#roomMargin(), quietest));
  }

  /** The level that keeps the caller's speech going (at most the onset's), dBFS. */
  continueDb(): number {
    return this.#continueDb(CONTINUE_BELOW_DB);
  }

  /** The level that keeps it going for a while, a soft last word (at most continueDb), dBFS. */
  softDb(): number {
    return this.#continueDb(SOFT_BELOW_DB);
  }

  #continueDb(belowDb: number): number {
    // Against the room's usual loudness, not its peaks: a word of the caller's that is softer than
    // the room's loudest syllable is still theirs, and ending their speech at it cuts them off.
    const room = this.#room.loud.value + this.#roomMargin();
    if (!this.#caller.known) return Math.max(room, this.#steadyDb());
    const voice = Math.max(room, this.#caller.value - belowDb);
    return Math.min(this.onsetDb(), Math.max(voice, this.#steadyDb()));
  }

  #roomMargin(): number {
    return ROOM_MARGIN_DB + EARLY_ROOM_MARGIN_DB * (1 - this.#room.frames / ROOM_KNOWN_FRAMES);
  }

  /** Above the floor: a sound that has not let up for the floor's window is no voice. */
  #steadyDb(): number {
    return this.#floor.value + FLOOR_MARGIN_DB;
  }

  #learnFloorDb(): number {
    // Below their level as it stood at its highest in this speech, not as it is: a lorry swelling
    // after a short "mm hmm", each frame within reach of a level that followed it down, took it
    // down 9 dB in 700 ms, and the rumble went on as their voice (street at 10 dB).
    return Math.max(this.#room.peaks.value + 1, this.#speechTopDb - LEARN_BELOW_DB, this.#steadyDb());
  }
}
