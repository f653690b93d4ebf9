import { describe, expect, it } from "vitest";
import { CallIndex, decodeCursor, encodeCursor } from "../../src/session/call-index.ts";

const at = (s: number) => new Date(Date.UTC(2025, 0, 2, 10, 0, s)).toISOString();

describe("CallIndex", () => {
  it("pages newest first; a cursor keeps its place while calls come in, out of order or at the same instant", () => {
    const index = new CallIndex();
    for (const [s, id] of [
      [3, "c"],
      [1, "a"],
      [2, "b2"],
      [2, "b1"],
      [4, "d"],
    ] as const)
      index.add({ startedAt: at(s), callId: id });
    index.add({ startedAt: at(9), callId: "a" }); // an id seen again keeps its first start
    expect(index.size).toBe(5);
    const p1 = index.page(2);
    expect(p1.calls.map((c) => c.callId)).toEqual(["d", "c"]);
    index.add({ startedAt: at(5), callId: "e" });
    const p2 = index.page(2, decodeCursor(encodeCursor(p1.next!)));
    expect(p2.calls.map((c) => c.callId)).toEqual(["b2", "b1"]);
    const p3 = index.page(2, p2.next);
    expect(p3).toEqual({ calls: [{ startedAt: at(1), callId: "a" }] });
    index.remove("c");
    expect(index.page(10).calls.map((c) => c.callId)).toEqual(["e", "d", "b2", "b1", "a"]);
  });

  it("refuses cursors it did not make", () => {
    for (const bad of [
      "",
      "abc",
      Buffer.from('["x","y"]').toString("base64url"),
      Buffer.from("[1,2]").toString("base64url"),
    ])
      expect(decodeCursor(bad)).toBeUndefined();
  });
});
