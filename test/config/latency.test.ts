// `local.latency` / SVC_LOCAL_LATENCY: every accepted form read into the typed value, every mistake
// refused at start with the key and what was wrong.
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/config.ts";
import { HOSTED_LATENCY, NO_LATENCY, parseLatency } from "../../src/config/latency.ts";
import { serviceOptionsFromConfig } from "../../src/service/index.ts";

const latencyOf = (value: string) => loadConfig({ env: { SVC_LOCAL_LATENCY: value } }).local.latency;

describe("local.latency", () => {
  it("is none by default, and none or off says so", () => {
    expect(loadConfig({ env: {} }).local.latency).toEqual(NO_LATENCY);
    expect(latencyOf("none")).toEqual(NO_LATENCY);
    expect(latencyOf("off")).toEqual(NO_LATENCY);
  });

  it("reads the hosted profile, stage delays, any subset, and overrides of the profile", () => {
    expect(latencyOf("hosted")).toEqual({ name: "hosted", ...HOSTED_LATENCY, jitter: 0, seed: 1 });
    expect(latencyOf("asr=400,chat=550,tts=250")).toMatchObject({ name: "hosted", ...HOSTED_LATENCY });
    expect(latencyOf("chat=800")).toEqual({
      name: "custom",
      asrMs: 0,
      chatMs: 800,
      ttsMs: 0,
      jitter: 0,
      seed: 1,
    });
    expect(latencyOf(" Hosted , tts = 300ms ")).toMatchObject({
      name: "custom",
      asrMs: 400,
      chatMs: 550,
      ttsMs: 300,
    });
    expect(latencyOf("hosted,jitter=25%,seed=7")).toMatchObject({ name: "hosted", jitter: 0.25, seed: 7 });
    expect(latencyOf("asr=100,jitter=10%")).toMatchObject({ asrMs: 100, jitter: 0.1, seed: 1 });
  });

  it("takes the same text from a config file's key and from a flag's override", () => {
    const fromOverride = loadConfig({ env: {}, overrides: { local: { latency: "hosted" } } });
    expect(fromOverride.local.latency.name).toBe("hosted");
  });

  it("reaches the local service's options", () => {
    const config = loadConfig({ env: { SVC_LOCAL_LATENCY: "hosted" } });
    expect(serviceOptionsFromConfig(config.local).conditions?.latency).toEqual(config.local.latency);
  });

  it("refuses bad values, naming the key and what was wrong", () => {
    const refused = (value: string) => () => latencyOf(value);
    const key = "environment variable SVC_LOCAL_LATENCY \\(local\\.latency\\)";
    expect(refused("fast")).toThrow(ConfigError);
    expect(refused("fast")).toThrow(
      new RegExp(`${key}: "fast" is not a profile or a part: expected hosted or none, or parts asr=MS`),
    );
    expect(refused("asr=abc")).toThrow(
      new RegExp(`${key}: asr=abc: expected whole milliseconds 0-60000 \\(e\\.g\\. asr=400\\)`),
    );
    expect(refused("chat=-5")).toThrow(/chat=-5: expected whole milliseconds/);
    expect(refused("tts=70000")).toThrow(/tts=70000: expected whole milliseconds 0-60000/);
    expect(refused("hosted,jitter=25")).toThrow(
      new RegExp(`${key}: jitter=25: expected a percentage 0-100% of each delay`),
    );
    expect(refused("hosted,jitter=150%")).toThrow(/jitter=150%: expected a percentage/);
    expect(refused("hosted,seed=x,jitter=5%")).toThrow(/seed=x: expected a whole number/);
    expect(refused("hosted,seed=7")).toThrow(/seed=7 without jitter: a seed only chooses the jitter's draws/);
    expect(refused("asr=1,asr=2")).toThrow(/asr given twice in "asr=1,asr=2"/);
    expect(refused("hosted,none")).toThrow(/one profile at most: "hosted,none" names hosted and none/);
    expect(refused("none,chat=5")).toThrow(/none takes no other parts: "none,chat=5"/);
    expect(refused("yes")).toThrow(new RegExp(`${key}: true: expected hosted or none`));
    expect(() => loadConfig({ env: {}, overrides: { local: { latency: " , " } } })).toThrow(
      /local\.latency.*: empty: expected hosted or none/,
    );
  });

  it("parses apart from the config for the benchmarks' --latency", () => {
    expect(parseLatency("tts=250").ttsMs).toBe(250);
    expect(() => parseLatency("slow")).toThrow(/"slow" is not a profile or a part/);
  });
});
