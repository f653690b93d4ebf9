import { describe, expect, it } from "vitest";
import { outcomeOf } from "../../src/records/outcome.ts";

describe("outcomeOf", () => {
  it("names how a call ended from the session's end reason", () => {
    expect(outcomeOf("agent: caller said goodbye")).toBe("agent_hangup");
    expect(outcomeOf("transferred to +15550100")).toBe("transferred");
    expect(outcomeOf("caller silent")).toBe("caller_silent");
    // Every space becomes `_` (the metric label was "max_call duration" before).
    expect(outcomeOf("max call duration")).toBe("max_call_duration");
    expect(outcomeOf("stop frame")).toBe("caller_hangup");
  });
});
