// A shard process serves Discord only: its configuration turns SIP and AudioSocket off over what
// the file and environment say, rather than the manager editing the environment it hands down.
import { describe, expect, it } from "vitest";
import { shardOverrides } from "../../app/sharding.ts";
import { loadConfig } from "../../src/config/config.ts";

describe("shardOverrides", () => {
  it("turns SIP and AudioSocket off in a shard process, over the environment", () => {
    const env = { SHARDING_MANAGER: "true", SHARDS: "1", SIP_PORT: "5070", AUDIOSOCKET_PORT: "9092" };
    const config = loadConfig({ env, overrides: shardOverrides(env) });
    expect(config.sip.port).toBe(false);
    expect(config.audiosocket.port).toBe(false);
  });

  it("leaves a process no manager started as configured", () => {
    const env = { SIP_PORT: "5070", AUDIOSOCKET_PORT: "9092" };
    expect(shardOverrides(env)).toEqual({});
    const config = loadConfig({ env, overrides: shardOverrides(env) });
    expect(config.sip.port).toBe(5070);
    expect(config.audiosocket.port).toBe(9092);
  });
});
