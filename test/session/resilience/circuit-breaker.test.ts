// A target's circuit on virtual time: opens on N failures within the window, lets one probe
// through after openMs, and closes on its success or opens again on its failure.
import { describe, expect, it } from "vitest";
import { VirtualClock } from "../../../src/core/clock.ts";
import { CircuitBreaker, type CircuitState } from "../../../src/session/resilience/circuit-breaker.ts";

function breaker() {
  const clock = new VirtualClock();
  const changes: CircuitState[] = [];
  const b = new CircuitBreaker(clock, { failures: 3, windowMs: 10_000, openMs: 5_000 }, (s) =>
    changes.push(s),
  );
  return { clock, b, changes };
}

describe("a circuit", () => {
  it("stays closed while the failures are spread wider than the window", () => {
    const { clock, b, changes } = breaker();
    for (let i = 0; i < 6; i++) {
      b.failed();
      clock.advance(6_000);
    }
    expect(b.state).toBe("closed");
    expect(b.allow()).toBe(true);
    expect(changes).toEqual([]);
  });

  it("opens on N failures within the window and lets nothing through until openMs", () => {
    const { clock, b, changes } = breaker();
    b.failed();
    clock.advance(4_000);
    b.failed();
    b.failed();
    expect(b.state).toBe("open");
    expect(b.allow()).toBe(false);
    clock.advance(4_999);
    expect(b.allow()).toBe(false);
    expect(changes).toEqual(["open"]);
  });

  it("after openMs lets one probe through; its success closes the circuit", () => {
    const { clock, b, changes } = breaker();
    for (let i = 0; i < 3; i++) b.failed();
    clock.advance(5_000);
    expect(b.allow()).toBe(true);
    expect(b.state).toBe("half-open");
    expect(b.allow()).toBe(false);
    b.succeeded();
    expect(b.state).toBe("closed");
    expect(b.allow()).toBe(true);
    expect(changes).toEqual(["open", "half-open", "closed"]);
  });

  it("opens again for openMs when the probe fails; an abandoned probe frees its place", () => {
    const { clock, b } = breaker();
    for (let i = 0; i < 3; i++) b.failed();
    clock.advance(5_000);
    expect(b.allow()).toBe(true);
    b.abandoned();
    expect(b.allow()).toBe(true);
    b.failed();
    expect(b.state).toBe("open");
    clock.advance(4_000);
    expect(b.allow()).toBe(false);
    clock.advance(1_000);
    expect(b.allow()).toBe(true);
  });
});
