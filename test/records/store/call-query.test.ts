import { describe, expect, it } from "vitest";
import { decodeCursor, encodeCursor, parseCallQuery } from "../../../src/records/store/call-query.ts";

const ok = (raw: Record<string, unknown>) => {
  const r = parseCallQuery(raw);
  if (!r.ok) throw new Error(r.message);
  return r.query;
};
const bad = (raw: Record<string, unknown>) => {
  const r = parseCallQuery(raw);
  if (r.ok) throw new Error(`accepted ${JSON.stringify(raw)}`);
  return r.message;
};

describe("GET /calls filters", () => {
  it("takes each filter, normalized", () => {
    expect(ok({})).toEqual({ limit: 20 });
    const cursor = encodeCursor({ startedAt: "2026-03-01T09:00:00.000Z", callId: "CA1" });
    expect(
      ok({
        limit: "5",
        cursor,
        from: " +15550001 ",
        to: "+15559999",
        transport: "sip",
        outcome: "caller_hangup",
        agent: "sales",
        since: "2026-03-01",
        until: "2026-03-02T10:30:00+02:00",
        q: "Where's my BIKE?",
      }),
    ).toEqual({
      limit: 5,
      after: { startedAt: "2026-03-01T09:00:00.000Z", callId: "CA1" },
      from: "+15550001",
      to: "+15559999",
      transport: "sip",
      outcome: "caller_hangup",
      agent: "sales",
      since: "2026-03-01T00:00:00.000Z",
      until: "2026-03-02T08:30:00.000Z",
      q: ["where", "s", "my", "bike"],
    });
    expect(ok({ outcome: "live" }).outcome).toBe("live");
    expect(ok({ outcome: "ended" }).outcome).toBe("ended");
  });

  it("names the bad filter and what was wrong", () => {
    expect(bad({ limit: "0" })).toMatch(/^limit: expected a whole number from 1 to 100, got "0"/);
    expect(bad({ cursor: "x" })).toMatch(/^cursor: /);
    expect(bad({ from: "" })).toMatch(/^from: expected a non-empty value/);
    expect(bad({ transport: "fax" })).toMatch(/^transport: expected one of twilio, sip/);
    expect(bad({ outcome: "happy" })).toMatch(/^outcome: expected one of agent_hangup/);
    expect(bad({ since: "yesterday" })).toMatch(/^since: expected an ISO 8601 date/);
    expect(bad({ until: "2026-02-30T25:00:00Z" })).toMatch(/^until: expected an ISO 8601 date/);
    expect(bad({ since: "2026-03-02", until: "2026-03-01" })).toMatch(/^until: must be after since/);
    expect(bad({ q: "?!" })).toMatch(/^q: expected words/);
    expect(bad({ q: Array(17).fill("w").join(" ") })).toMatch(/^q: at most 16 words/);
    expect(bad({ frm: "+1555" })).toMatch(/^frm: not a filter of GET \/calls/);
    expect(bad({ from: ["a", "b"] })).toMatch(/^from: given more than once/);
  });

  it("reads back only the cursors it made", () => {
    const at = { startedAt: "2026-03-01T09:00:00.000Z", callId: "a@b" };
    expect(decodeCursor(encodeCursor(at))).toEqual(at);
    for (const c of [
      "",
      "abc",
      Buffer.from('["x","y"]').toString("base64url"),
      Buffer.from("[1,2]").toString("base64url"),
    ])
      expect(decodeCursor(c)).toBeUndefined();
  });
});
