import { describe, expect, it } from "vitest";
import { retryAfterMs } from "../../../src/api/http.ts";
import { DEFAULT_BACKOFF, retryDelayMs } from "../../../src/records/reports/backoff.ts";

describe("retry backoff", () => {
  it("doubles from 1 s, jittered within the upper half of each step, capped at 5 minutes", () => {
    const low = (n: number) => retryDelayMs(n, DEFAULT_BACKOFF, () => 0);
    const high = (n: number) => retryDelayMs(n, DEFAULT_BACKOFF, () => 1);
    expect([1, 2, 3, 4].map(low)).toEqual([500, 1000, 2000, 4000]);
    expect([1, 2, 3, 4].map(high)).toEqual([1000, 2000, 4000, 8000]);
    expect(high(9)).toBe(256_000);
    expect(high(10)).toBe(300_000);
    expect(low(500)).toBe(150_000);
    expect(high(500)).toBe(300_000);
  });

  it("reads Retry-After as seconds or an HTTP date", () => {
    const now = Date.parse("2025-01-02T10:00:00Z");
    const ra = (value?: string) => new Headers(value === undefined ? {} : { "retry-after": value });
    expect(retryAfterMs(ra("30"), now)).toBe(30_000);
    expect(retryAfterMs(ra("Thu, 02 Jan 2025 10:01:00 GMT"), now)).toBe(60_000);
    expect(retryAfterMs(ra(), now)).toBeUndefined();
    expect(retryAfterMs(ra("soon"), now)).toBeUndefined();
  });
});
