// What the caller-level gate has learned of the room behind the caller (caller-level.ts): its
// median level, how loud it gets, how loud its voices get and how often it sounds like a voice.
// Kept apart from the caller's level so that a second copy can learn the same room without some
// of its frames (the voice heard as the call connected, which may have been the caller's own:
// CallerLevel.settleEarly) and take the first one's place.
import { PeakTracker, QuantileTracker } from "../../codecs/level-tracker.ts";

/** The room's frames learned before it counts as known (3 s of 20 ms frames). */
export const ROOM_KNOWN_FRAMES = 150;
/** The share of frames that sound like a voice is a running mean over this many (5 s). */
const ROOM_VOICE_FRAMES = 250;

export class RoomLevels {
  /** Everything not the caller's: its median. */
  readonly median = new QuantileTracker(0.5, 0.5);
  /** ...and its 95th percentile: how loud the room gets, a voice or not. */
  readonly all = new QuantileTracker(0.95, 1);
  /** The room's voices at their loudest (a talker's loudest syllable), fading 0.5 dB/s. */
  readonly peaks = new PeakTracker(0.01);
  /** ...from what the detector called speech only, not what sounded as the call connected. */
  readonly heardPeaks = new PeakTracker(0.01);
  /** The room's voices' 90th percentile: how loud its talk usually is. */
  readonly loud = new QuantileTracker(0.9, 1);
  /** Frames learned (up to ROOM_KNOWN_FRAMES). */
  frames = 0;
  /** The share of the room's recent frames the detector called speech (a running mean). */
  voiceShare = 0;
  #voiceFrames = 0;

  /** A frame of the room's; see CallerLevel.room. */
  learn(db: number, voice: boolean, clear: boolean, connecting: boolean): void {
    this.median.push(db);
    if (!clear) this.all.push(db);
    // Every frame of the room's counts to knowing it, a voice's or not: counting voices' alone,
    // a room of music (the detector rarely calls it speech) kept the early margin for ever, over
    // peaks set by its first chord, and a caller 10 dB above it was never heard.
    if (this.frames < ROOM_KNOWN_FRAMES) this.frames++;
    if (this.#voiceFrames < ROOM_VOICE_FRAMES) this.#voiceFrames++;
    this.voiceShare += ((voice ? 1 : 0) - this.voiceShare) / this.#voiceFrames;
    if (!voice) return;
    if (!connecting) this.heardPeaks.push(db);
    this.peaks.push(db);
    this.loud.push(db);
  }

  /** Takes what `other` learned in place of its own. */
  copyFrom(other: RoomLevels): void {
    this.median.copyFrom(other.median);
    this.all.copyFrom(other.all);
    this.peaks.copyFrom(other.peaks);
    this.heardPeaks.copyFrom(other.heardPeaks);
    this.loud.copyFrom(other.loud);
    this.frames = other.frames;
    this.voiceShare = other.voiceShare;
    this.#voiceFrames = other.#voiceFrames;
  }
}
