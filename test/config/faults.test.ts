// `local.faults` / SVC_LOCAL_FAULTS: every accepted form read into the typed value, every mistake
// refused at start with the key and what was wrong.
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/config.ts";
import { NO_FAULTS, parseFaults } from "../../src/config/faults.ts";
import { serviceOptionsFromConfig } from "../../src/service/index.ts";

const faultsOf = (value: string) => loadConfig({ env: { SVC_LOCAL_FAULTS: value } }).local.faults;

describe("local.faults", () => {
  it("is none by default, and none or off says so", () => {
    expect(loadConfig({ env: {} }).local.faults).toEqual(NO_FAULTS);
    expect(faultsOf("none")).toEqual(NO_FAULTS);
    expect(faultsOf("off")).toEqual(NO_FAULTS);
  });

  it("reads each kind's probability, any subset, as a fraction or a percentage, and the seed", () => {
    expect(faultsOf("chat503=0.3,asr503=0.2,ttsCut=0.2,chatStall=0.1")).toEqual({
      chat503: 0.3,
      asr503: 0.2,
      ttsCut: 0.2,
      chatStall: 0.1,
      seed: 1,
    });
    expect(faultsOf(" ttscut = 25% , SEED=7 ")).toEqual({ ...NO_FAULTS, ttsCut: 0.25, seed: 7 });
    expect(faultsOf("chat503=1,asr503=0")).toEqual({ ...NO_FAULTS, chat503: 1 });
    expect(faultsOf("chatStall=.5")).toMatchObject({ chatStall: 0.5 });
  });

  it("takes the same text from a config file's key and from a flag's override", () => {
    const fromOverride = loadConfig({ env: {}, overrides: { local: { faults: "asr503=0.2" } } });
    expect(fromOverride.local.faults.asr503).toBe(0.2);
  });

  it("reaches the local service's options", () => {
    const config = loadConfig({ env: { SVC_LOCAL_FAULTS: "chat503=0.3,seed=4" } });
    expect(serviceOptionsFromConfig(config.local).conditions?.faults).toEqual(config.local.faults);
  });

  it("refuses bad values, naming the key and what was wrong", () => {
    const refused = (value: string) => () => faultsOf(value);
    const key = "environment variable SVC_LOCAL_FAULTS \\(local\\.faults\\)";
    expect(refused("chat500=0.3")).toThrow(ConfigError);
    expect(refused("chat500=0.3")).toThrow(
      new RegExp(`${key}: chat500=0.3: unknown fault "chat500": expected none, or parts KIND=P`),
    );
    expect(refused("chat503=1.5")).toThrow(
      new RegExp(`${key}: chat503=1.5: chat503 is a probability, expected 0-1 or 0-100%`),
    );
    expect(refused("ttsCut=120%")).toThrow(/ttsCut=120%: ttsCut is a probability, expected 0-1/);
    expect(refused("asr503=-0.1")).toThrow(/asr503=-0.1: asr503 is a probability/);
    expect(refused("asr503=often")).toThrow(/asr503=often: asr503 is a probability/);
    expect(refused("chatStall")).toThrow(/"chatStall" is not KIND=P or seed=N/);
    expect(refused("seed=x")).toThrow(/seed=x: expected a whole number/);
    expect(refused("chat503=0.1,CHAT503=0.2")).toThrow(/CHAT503 given twice/);
    expect(refused("none,chat503=0.1")).toThrow(/"none" is not KIND=P or seed=N/);
    expect(refused("yes")).toThrow(new RegExp(`${key}: true: expected none, or parts`));
    expect(() => loadConfig({ env: {}, overrides: { local: { faults: " , " } } })).toThrow(
      /local\.faults.*: empty: expected none/,
    );
  });

  it("parses apart from the config for the benchmarks' --faults", () => {
    expect(parseFaults("ttsCut=0.2").ttsCut).toBe(0.2);
    expect(() => parseFaults("cut=0.2")).toThrow(/unknown fault "cut"/);
  });
});
