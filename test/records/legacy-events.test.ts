// Call-ends recorded before the outcome came with the end (a reason only) read as events of now.
import { describe, expect, it } from "vitest";
import { eventOfNow, legacyOutcomeOf } from "../../src/records/legacy-events.ts";

describe("legacy call-ends", () => {
  it("get the outcome their reason meant, as the versions that wrote them counted it", () => {
    expect(legacyOutcomeOf("agent: caller said goodbye")).toBe("agent_hangup");
    expect(legacyOutcomeOf("transferred to +15550100")).toBe("transferred");
    expect(legacyOutcomeOf("caller silent")).toBe("caller_silent");
    expect(legacyOutcomeOf("max call duration")).toBe("max_call_duration");
    expect(legacyOutcomeOf("instance lost")).toBe("instance_lost");
    expect(legacyOutcomeOf("unanswered: busy (486 Busy Here)")).toBe("unanswered");
    expect(legacyOutcomeOf("stop frame")).toBe("caller_hangup");
  });

  it("read the shutdown's end for what it was, not as a hang-up", () => {
    expect(legacyOutcomeOf("bridge shut down")).toBe("bridge_shutdown");
  });

  it("leave every other event, and a call-end with its outcome, as they are", () => {
    const at = "2026-03-01T09:00:00.000Z";
    const legacy = { type: "call-end", at, reason: "agent: done", durationMs: 5 } as const;
    expect(eventOfNow(legacy)).toEqual({ ...legacy, outcome: "agent_hangup" });
    const now = { ...legacy, reason: "agent: done", outcome: "bridge_shutdown" } as const;
    expect(eventOfNow(now)).toBe(now);
    const note = { type: "note", at, text: "hello" } as const;
    expect(eventOfNow(note)).toBe(note);
  });
});
