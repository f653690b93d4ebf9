// Calling hours read on the callee's clock: weekdays, the window's edges, zones on either side of
// the date line, and the days daylight-saving time starts and ends.
import { describe, expect, it } from "vitest";
import { callingHoursSchema, isOpen, nextOpening, validZone } from "../../src/campaigns/calling-hours.ts";

const hours = callingHoursSchema.parse({ days: "mon-fri", from: "09:00", to: "17:00" });
const at = (iso: string) => Date.parse(iso);

describe("calling hours", () => {
  it("opens at `from` and closes at `to` on the callee's clock, on the days named", () => {
    // Wednesday 2025-01-15.
    expect(isOpen(hours, "Europe/Paris", at("2025-01-15T07:59:00Z"))).toBe(false); // 08:59 Paris
    expect(isOpen(hours, "Europe/Paris", at("2025-01-15T08:00:00Z"))).toBe(true); // 09:00
    expect(isOpen(hours, "Europe/Paris", at("2025-01-15T15:59:00Z"))).toBe(true); // 16:59
    expect(isOpen(hours, "Europe/Paris", at("2025-01-15T16:00:00Z"))).toBe(false); // 17:00
    expect(isOpen(hours, "America/New_York", at("2025-01-15T14:00:00Z"))).toBe(true); // 09:00 EST
    // Saturday in Paris: closed.
    expect(isOpen(hours, "Europe/Paris", at("2025-01-18T10:00:00Z"))).toBe(false);
  });

  it("reads the weekday of the callee's date, not UTC's", () => {
    // Friday 23:30 UTC is Saturday 08:30 in Tokyo, and Friday 18:30 in New York.
    const t = at("2025-01-17T23:30:00Z");
    const sat = callingHoursSchema.parse({ days: "sat", from: "08:00", to: "12:00" });
    expect(isOpen(sat, "Asia/Tokyo", t)).toBe(true);
    expect(isOpen(sat, "America/New_York", t)).toBe(false);
  });

  it("follows daylight-saving time: 09:00 in New York is 14:00 UTC in winter, 13:00 in summer", () => {
    // DST starts Sunday 2025-03-09 in the US; Monday the 10th is on EDT.
    expect(isOpen(hours, "America/New_York", at("2025-03-07T13:30:00Z"))).toBe(false); // Fri 08:30 EST
    expect(isOpen(hours, "America/New_York", at("2025-03-10T13:30:00Z"))).toBe(true); // Mon 09:30 EDT
    // Europe ends DST on 2025-10-26: on Monday the 27th, 09:00 Paris is 08:00 UTC.
    expect(nextOpening(hours, "Europe/Paris", at("2025-10-27T05:00:00Z"))).toBe(at("2025-10-27T08:00:00Z"));
    expect(nextOpening(hours, "Europe/Paris", at("2025-10-24T05:00:00Z"))).toBe(at("2025-10-24T07:00:00Z"));
  });

  it("finds the next opening across a weekend, and none when no day is ever open", () => {
    // Friday 18:00 Paris: next is Monday 09:00.
    expect(nextOpening(hours, "Europe/Paris", at("2025-01-17T17:00:00Z"))).toBe(at("2025-01-20T08:00:00Z"));
    const open = at("2025-01-15T10:00:00Z");
    expect(nextOpening(hours, "Europe/Paris", open)).toBe(open);
  });

  it("checks its settings and says what is wrong", () => {
    expect(callingHoursSchema.safeParse({ days: "mon-funday" }).error?.issues[0]?.message).toMatch(
      /not a day/,
    );
    expect(callingHoursSchema.safeParse({ from: "9am" }).error?.issues[0]?.path).toEqual(["from"]);
    expect(callingHoursSchema.safeParse({ from: "18:00", to: "09:00" }).error?.issues[0]?.path).toEqual([
      "to",
    ]);
    expect(callingHoursSchema.parse({ days: ["sat", "mon-tue"] }).days).toEqual(["mon", "tue", "sat"]);
    expect(validZone("Europe/Paris")).toBe(true);
    expect(validZone("Mars/Olympus")).toBe(false);
    expect(validZone("../etc")).toBe(false);
  });
});
