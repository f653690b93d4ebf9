// TurnPlayout's heard position, asked after every packet played, against the plain reading of its
// definition (the last segment that has started playing, from the first segment each time), over
// long turns of many segments, pauses and resumes, other audio queued before the turn, and a
// transport whose playout position is read at any step.
import { describe, expect, it } from "vitest";
import { TurnPlayout } from "../../src/session/playout.ts";
import type { AgentAudio, CallInfo, CallTransport, TransportListener } from "../../src/session/transport.ts";
import { seededRandom } from "../helpers/noise.ts";

const RATE = 8000;

/** A transport whose playout position the test sets: nothing plays by itself. */
class SteppedTransport implements CallTransport {
  readonly info: CallInfo = { callId: "playout-test", transport: "test", params: {} };
  readonly inputRate = RATE;
  readonly output = { kind: "pcm", rate: RATE } as const;
  queued = 0;
  played = 0;
  /** Each play(): where it starts on the transport's timeline and how long it is, ms. */
  readonly plays: { startMs: number; ms: number }[] = [];
  attach(_listener: TransportListener): void {}
  play(audio: AgentAudio): void {
    const ms = ((audio as Int16Array).length * 1000) / RATE;
    this.plays.push({ startMs: this.queued, ms });
    this.queued += ms;
  }
  clear(): void {
    this.queued = this.played;
  }
  queuedMs(): number {
    return this.queued;
  }
  playedMs(): number {
    return this.played;
  }
  /** Plays `ms` more, never past what is queued. */
  advance(ms: number): void {
    this.played = Math.min(this.queued, this.played + ms);
  }
  async hangUp(): Promise<void> {}
  async transfer(): Promise<void> {}
}

/**
 * The definition, read from scratch: a model of the turn kept beside the playout, its segments
 * (where each piece of the turn went on the transport's timeline) rebuilt on every resume.
 */
class Model {
  segments: { transportStartMs: number; turnStartMs: number; durationMs: number }[] = [];
  heardAtPause = 0;
  heard(played: number): number {
    let heard = this.heardAtPause;
    for (const s of this.segments) {
      if (played <= s.transportStartMs) break;
      heard = s.turnStartMs + Math.min(s.durationMs, played - s.transportStartMs);
    }
    return heard;
  }
}

describe("TurnPlayout.heardMs", () => {
  it("follows every packet of long turns as the definition does, through pauses and resumes", () => {
    for (let seed = 1; seed <= 40; seed++) {
      const rnd = seededRandom(seed);
      const transport = new SteppedTransport();
      // Audio of an earlier turn still queued: this turn's first segment starts after it.
      transport.play(new Int16Array(Math.floor(rnd() * 10) * 160));
      const playout = new TurnPlayout(transport);
      const model = new Model();
      let turnMs = 0;
      let paused = false;
      for (let step = 0; step < 600; step++) {
        const r = rnd();
        if (r < 0.3) {
          const samples = (1 + Math.floor(rnd() * 25)) * 160;
          const before = transport.plays.length;
          playout.push(new Int16Array(samples));
          const ms = (samples * 1000) / RATE;
          if (!paused) {
            const sent = transport.plays[before]!;
            model.segments.push({ transportStartMs: sent.startMs, turnStartMs: turnMs, durationMs: ms });
          }
          turnMs += ms;
        } else if (r < 0.33 && !paused) {
          model.heardAtPause = model.heard(transport.played);
          playout.pause();
          model.segments = [];
          paused = true;
        } else if (r < 0.36 && paused) {
          const before = transport.plays.length;
          playout.resume();
          paused = false;
          // What resume() sent again, from the heard position on, in turn order.
          let turnStart = model.heardAtPause;
          for (const sent of transport.plays.slice(before)) {
            model.segments.push({
              transportStartMs: sent.startMs,
              turnStartMs: turnStart,
              durationMs: sent.ms,
            });
            turnStart += sent.ms;
          }
        } else {
          transport.advance(20 * Math.floor(rnd() * 4));
        }
        const expected = paused ? model.heardAtPause : model.heard(transport.played);
        expect(playout.heardMs(), `seed ${seed}, step ${step}`).toBe(expected);
        expect(playout.hasUnplayed()).toBe(expected < turnMs - 0.5);
      }
    }
  });

  it("reads a position that went back (a transport that rewound) from the first segment again", () => {
    const transport = new SteppedTransport();
    transport.play(new Int16Array(4000)); // 500 ms of an earlier turn still queued
    const playout = new TurnPlayout(transport);
    for (let i = 0; i < 10; i++) playout.push(new Int16Array(800)); // 10 × 100 ms, from 500 ms on
    transport.played = 1250;
    expect(playout.heardMs()).toBe(750);
    transport.played = 620;
    expect(playout.heardMs()).toBe(120);
    transport.played = 100;
    expect(playout.heardMs()).toBe(0);
    transport.played = 1500;
    expect(playout.heardMs()).toBe(1000);
    expect(playout.hasUnplayed()).toBe(false);
  });
});

describe("TurnPlayout.dryRuns", () => {
  const ms100 = () => new Int16Array(800);

  it("counts audio that came after the caller had heard everything sent, and nothing else", () => {
    const transport = new SteppedTransport();
    transport.play(new Int16Array(1600)); // an earlier turn's 200 ms, all of it heard by now
    transport.advance(200);
    const playout = new TurnPlayout(transport);
    playout.push(ms100()); // the turn's first audio after a quiet spell: a start, not a hole
    transport.advance(60);
    playout.push(ms100()); // 40 ms still to play: in time
    expect(playout.dryRuns).toBe(0);
    transport.advance(140); // everything sent is heard
    playout.push(ms100()); // the rest came late: the caller heard silence mid-reply
    expect(playout.dryRuns).toBe(1);
    transport.advance(1000);
    playout.push(ms100());
    playout.push(ms100()); // right behind the one before: in time
    expect(playout.dryRuns).toBe(2);
  });

  it("does not count the audio of a held turn, nor its release, nor what comes in time after it", () => {
    const transport = new SteppedTransport();
    const playout = new TurnPlayout(transport, { held: true });
    playout.push(ms100());
    transport.advance(500);
    playout.push(ms100()); // still held: nothing was sent, nothing ran dry
    playout.resume();
    expect(transport.queued).toBe(200);
    transport.advance(150);
    playout.push(ms100());
    expect(playout.dryRuns).toBe(0);
    transport.advance(300);
    playout.push(ms100());
    expect(playout.dryRuns).toBe(1);
  });

  it("does not count what waits during a pause (a backchannel), nor the resume", () => {
    const transport = new SteppedTransport();
    const playout = new TurnPlayout(transport);
    playout.push(ms100());
    transport.advance(50);
    playout.pause(); // the transport drops what was queued
    playout.push(ms100());
    transport.advance(1000);
    playout.resume();
    expect(playout.dryRuns).toBe(0);
  });
});

describe("TurnPlayout.keptMs", () => {
  it("lets go of pieces the caller heard in full and keeps what a resume still sends", () => {
    const transport = new SteppedTransport();
    const playout = new TurnPlayout(transport);
    for (let i = 0; i < 5; i++) playout.push(new Int16Array(800 * (i + 1))); // 100..500 ms: 1.5 s
    expect(playout.keptMs).toBe(1500);
    transport.advance(250); // all of the first two pieces (300 ms) not yet: only the first
    playout.heardMs();
    expect(playout.keptMs).toBe(1400);
    transport.advance(100); // 350 ms heard: the second piece ended at 300
    playout.pause();
    expect(playout.keptMs).toBe(1200);
    playout.push(new Int16Array(800));
    playout.resume(); // from 350 ms: the rest of the third piece, then the fourth, fifth and sixth
    const resent = transport.plays.slice(5);
    expect(resent.map((p) => p.ms)).toEqual([250, 400, 500, 100]);
    transport.advance(10_000);
    expect(playout.hasUnplayed()).toBe(false);
    expect(playout.keptMs).toBe(0);
  });

  it("keeps everything of a held turn until it is heard, and nothing once stopped", () => {
    const transport = new SteppedTransport();
    const playout = new TurnPlayout(transport, { held: true });
    playout.push(new Int16Array(800));
    transport.advance(5000);
    playout.heardMs();
    expect(playout.keptMs).toBe(100);
    playout.resume();
    transport.advance(40);
    expect(playout.stop()).toBe(40);
    expect(playout.keptMs).toBe(0);
  });
});
