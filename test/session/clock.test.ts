import { describe, expect, it } from "vitest";
import { systemClock, VirtualClock } from "../../src/core/clock.ts";

describe("VirtualClock", () => {
  it("fires timers in time order, including timers set by timers", () => {
    const clock = new VirtualClock();
    const fired: string[] = [];
    clock.setTimeout(() => fired.push(`b@${clock.now()}`), 20);
    clock.setTimeout(() => {
      fired.push(`a@${clock.now()}`);
      clock.setTimeout(() => fired.push(`c@${clock.now()}`), 5);
    }, 10);
    clock.advance(14);
    expect(fired).toEqual(["a@10"]);
    clock.advance(100);
    expect(fired).toEqual(["a@10", "c@15", "b@20"]);
    expect(clock.now()).toBe(114);
  });

  it("cancels timers", () => {
    const clock = new VirtualClock();
    let fired = false;
    const h = clock.setTimeout(() => {
      fired = true;
    }, 5);
    clock.clearTimeout(h);
    clock.advance(10);
    expect(fired).toBe(false);
    expect(clock.pendingTimers).toBe(0);
  });
});

describe("systemClock", () => {
  it("is monotonic and runs and cancels real timers", async () => {
    const t0 = systemClock.now();
    let cancelled = true;
    const h = systemClock.setTimeout(() => {
      cancelled = false;
    }, 1);
    systemClock.clearTimeout(h);
    await new Promise<void>((resolve) => systemClock.setTimeout(resolve, 5));
    expect(systemClock.now()).toBeGreaterThan(t0);
    expect(cancelled).toBe(true);
  });
});
