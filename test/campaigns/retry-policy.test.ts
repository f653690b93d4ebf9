// The retry policy per outcome: attempts count every call to the row; delays; the campaign's end.
import { describe, expect, it } from "vitest";
import { afterAttempt, retryPolicySchema } from "../../src/campaigns/retry-policy.ts";

const policy = retryPolicySchema.parse({ busy: { attempts: 3, delayS: 60 }, "no-answer": { attempts: 2 } });

describe("retry policy", () => {
  it("retries an outcome while the row has had fewer calls than its attempts, after its delay", () => {
    expect(afterAttempt(policy, "busy", 1, 1000)).toEqual({ retry: true, at: 61_000 });
    expect(afterAttempt(policy, "busy", 2, 1000)).toEqual({ retry: true, at: 61_000 });
    expect(afterAttempt(policy, "busy", 3, 1000)).toEqual({ retry: false });
    expect(afterAttempt(policy, "no-answer", 1, 0)).toEqual({ retry: true, at: 1_800_000 });
    expect(afterAttempt(policy, "no-answer", 2, 0)).toEqual({ retry: false });
  });

  it("never retries an answered call, a do-not-call number or a canceled one", () => {
    expect(afterAttempt(policy, "answered", 1, 0)).toEqual({ retry: false });
    expect(afterAttempt(policy, "do-not-call", 1, 0)).toEqual({ retry: false });
    expect(afterAttempt(policy, "canceled", 1, 0)).toEqual({ retry: false });
  });

  it("by default leaves a voicemail that got the message alone, retries one that did not", () => {
    const d = retryPolicySchema.parse({});
    expect(afterAttempt(d, "voicemail-left", 1, 0)).toEqual({ retry: false });
    expect(afterAttempt(d, "voicemail", 1, 0).retry).toBe(true);
    expect(afterAttempt(d, "lost", 1, 0)).toEqual({ retry: true, at: 0 });
  });

  it("does not retry past the campaign's end", () => {
    expect(afterAttempt(policy, "busy", 1, 0, 30_000)).toEqual({ retry: false });
  });

  it("names the field of a bad policy", () => {
    const r = retryPolicySchema.safeParse({ busy: { attempts: 0 } });
    expect(r.error?.issues[0]?.path).toEqual(["busy", "attempts"]);
    expect(retryPolicySchema.safeParse({ engaged: {} }).error?.issues[0]?.code).toBe("unrecognized_keys");
  });
});
