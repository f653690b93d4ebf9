import { describe, expect, it } from "vitest";
import { isLoopbackCaller, isLoopbackHost } from "../../bridges/loopback.ts";

describe("loopback", () => {
  it("knows the addresses only this machine reaches", () => {
    for (const h of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "::ffff:127.0.0.1", "localhost"])
      expect(isLoopbackHost(h), h).toBe(true);
    for (const h of [
      "0.0.0.0",
      "::",
      "10.0.0.5",
      "192.168.1.2",
      "::ffff:10.0.0.5",
      "example.com",
      "128.0.0.1",
    ])
      expect(isLoopbackHost(h), h).toBe(false);
  });

  it("takes a caller from loopback that no proxy forwarded", () => {
    expect(isLoopbackCaller("127.0.0.1", {})).toBe(true);
    expect(isLoopbackCaller("::ffff:127.0.0.1", {})).toBe(true);
    expect(isLoopbackCaller("10.0.0.5", {})).toBe(false);
    expect(isLoopbackCaller(undefined, {})).toBe(false);
    expect(isLoopbackCaller("127.0.0.1", { "x-forwarded-for": "203.0.113.9" })).toBe(false);
    expect(isLoopbackCaller("127.0.0.1", { forwarded: "for=203.0.113.9" })).toBe(false);
  });
});
