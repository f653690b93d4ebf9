import { describe, expect, it } from "vitest";
import { MarkLedger } from "../../../bridges/twilio/marks.ts";

describe("MarkLedger", () => {
  it("counts echoed marks as heard, writes off those pending at a clear, flags strangers", () => {
    const l = new MarkLedger();
    const a = l.add(100, 0, 100);
    const b = l.add(100, 20, 200);
    const c = l.add(60, 40, 260);
    expect(new Set([a, b, c]).size).toBe(3);
    expect(l.echo(a, 110)).toEqual({ kind: "played", ms: 100, lagMs: 110, lateMs: 10 });
    expect(l.playedMs).toBe(100);
    expect(l.clear()).toBe(2);
    expect(l.echo(c, 150)).toEqual({ kind: "cleared" });
    expect(l.echo(b, 150)).toEqual({ kind: "cleared" });
    expect(l.echo(b, 160)).toEqual({ kind: "unknown" });
    expect(l.echo("nope", 160)).toEqual({ kind: "unknown" });
    const d = l.add(40, 200, 240);
    expect(l.echo(d, 250)).toMatchObject({ kind: "played", ms: 40 });
    expect(l.playedMs).toBe(140);
    expect(l.pendingCount).toBe(0);
    expect(l.stats).toEqual({
      sent: 4,
      played: 2,
      cleared: 2,
      unknown: 2,
      meanLagMs: 80,
      maxLagMs: 110,
      maxLateMs: 10,
    });
  });
});
