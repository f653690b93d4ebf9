import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, consoleEnabled, loadConfig, usesLocalService } from "../../src/config/config.ts";

function tmpFile(name: string, text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), "vb-config-")), name);
  writeFileSync(file, text);
  return file;
}

describe("loadConfig", () => {
  it("has defaults that start the embedded local service", () => {
    const config = loadConfig({ env: {} });
    expect(config.server).toEqual({ host: "0.0.0.0", port: 8080 });
    expect(config.log).toEqual({ level: "info", format: "auto" });
    expect(usesLocalService(config)).toBe(true);
  });

  it("layers file < environment < overrides", () => {
    const file = tmpFile("c.yaml", "server:\n  port: 9000\n  host: 127.0.0.1\nlog:\n  level: debug\n");
    const config = loadConfig({
      file,
      env: { PORT: "9100", LOG_LEVEL: "warn" },
      overrides: { server: { port: "9200" } },
    });
    expect(config.server.port).toBe(9200);
    expect(config.server.host).toBe("127.0.0.1");
    expect(config.log.level).toBe("warn");
  });

  it("reads JSON files and splits comma-separated key lists", () => {
    const file = tmpFile("c.json", JSON.stringify({ local: { apiKeys: ["a", "b"] } }));
    expect(loadConfig({ file, env: {} }).local.apiKeys).toEqual(["a", "b"]);
    expect(loadConfig({ env: { SVC_LOCAL_API_KEYS: " k1, ,k2 " } }).local.apiKeys).toEqual(["k1", "k2"]);
  });

  it("turns false-like environment strings into false", () => {
    expect(loadConfig({ env: { SVC_PLAN_TIER: "false" } }).service.planTier).toBe(false);
    expect(loadConfig({ env: { SVC_PLAN_TIER: "1" } }).service.planTier).toBe(true);
  });

  it("uses the hosted service once a key or base URL is given", () => {
    expect(usesLocalService(loadConfig({ env: { SVC_API_KEY: "k" } }))).toBe(false);
  });

  it("serves the console with the local service unless told otherwise, and checks its token", () => {
    const hosted = { SVC_BASE_URL: "https://svc.example.com", SVC_API_KEY: "k" };
    expect(consoleEnabled(loadConfig({ env: {} }))).toBe(true);
    expect(consoleEnabled(loadConfig({ env: hosted }))).toBe(false);
    expect(consoleEnabled(loadConfig({ env: { ...hosted, CONSOLE_ENABLED: "true" } }))).toBe(true);
    expect(consoleEnabled(loadConfig({ env: { CONSOLE_ENABLED: "off" } }))).toBe(false);
    const file = tmpFile("c.yaml", "console:\n  enabled: false\nserver:\n  token: a-long-enough-token\n");
    const fromFile = loadConfig({ file, env: {} });
    expect(consoleEnabled(fromFile)).toBe(false);
    expect(fromFile.server.token).toBe("a-long-enough-token");
    expect(() => loadConfig({ env: { CONSOLE_ENABLED: "maybe" } })).toThrow(
      /CONSOLE_ENABLED \(console\.enabled\): expected true or false/,
    );
    expect(() => loadConfig({ env: { BRIDGE_TOKEN: "short" } })).toThrow(
      /BRIDGE_TOKEN \(server\.token\): expected a token of at least 16 characters, or "off"/,
    );
    expect(loadConfig({ env: { BRIDGE_TOKEN: "off" } }).server.token).toBe("off");
    expect(loadConfig({ env: {} }).server.token).toBeUndefined();
  });

  it("names the environment variable and the key of a bad value", () => {
    expect(() => loadConfig({ env: { PORT: "eighty" } })).toThrow(ConfigError);
    expect(() => loadConfig({ env: { PORT: "eighty" } })).toThrow(
      /environment variable PORT \(server\.port\): .*port/,
    );
    expect(() => loadConfig({ env: { LOG_LEVEL: "loud" } })).toThrow(/LOG_LEVEL \(log\.level\).*"info"/);
    expect(() => loadConfig({ env: { SVC_BASE_URL: "not a url" } })).toThrow(
      /SVC_BASE_URL \(service\.baseUrl\)/,
    );
  });

  it("reads the turn-taking keys from the environment and flags, and names what is wrong with them", () => {
    const d = loadConfig({ env: {} }).agent;
    expect([d.endOfTurnConfidence, d.endOfTurnLmWeight, d.endOfTurnProsody, d.adaptToCaller]).toEqual([
      0.9,
      1.3,
      false,
      true,
    ]);
    const a = loadConfig({
      env: {
        AGENT_END_OF_TURN_CONFIDENCE: "0.95",
        AGENT_ADAPT_TO_CALLER: "off",
        AGENT_END_OF_TURN_LM: "off",
      },
      overrides: { agent: { endOfTurnProsody: "true", endOfTurnLmWeight: "0" } },
    }).agent;
    expect([
      a.endOfTurnConfidence,
      a.adaptToCaller,
      a.endOfTurnLm,
      a.endOfTurnProsody,
      a.endOfTurnLmWeight,
    ]).toEqual([0.95, false, "off", true, 0]);
    expect(() => loadConfig({ env: { AGENT_END_OF_TURN_CONFIDENCE: "1.5" } })).toThrow(
      /AGENT_END_OF_TURN_CONFIDENCE \(agent\.endOfTurnConfidence\): expected a probability above 0\.5 and below 1/,
    );
    expect(() => loadConfig({ env: { AGENT_END_OF_TURN_PROSODY: "maybe" } })).toThrow(
      /AGENT_END_OF_TURN_PROSODY \(agent\.endOfTurnProsody\): expected true or false/,
    );
    expect(() => loadConfig({ env: { AGENT_END_OF_TURN_LM_WEIGHT: "-1" } })).toThrow(
      /expected a weight from 0 to 5/,
    );
    const file = tmpFile("eou.yaml", "agent:\n  minEndOfTurnMs: 900\n  maxEndOfTurnMs: 600\n");
    expect(() => loadConfig({ file, env: {} })).toThrow(
      `${file}: agent.maxEndOfTurnMs: must be at least minEndOfTurnMs (900)`,
    );
  });

  it("names the file and the key of a bad value in a config file", () => {
    const file = tmpFile("bad.yaml", "server:\n  port: 70000\n");
    expect(() => loadConfig({ file, env: {} })).toThrow(
      `${file}: server.port: expected a port number 0-65535`,
    );
  });

  it("reads the call report section: off by default, a secret required with the URL", () => {
    expect(loadConfig({ env: {} }).callReports).toEqual({});
    const on = loadConfig({
      env: {
        CALL_REPORT_URL: "https://reports.example.com/calls",
        CALL_REPORT_SECRET: "0123456789abcdef",
        CALL_REPORT_DIR: "/var/spool/vb",
      },
    });
    expect(on.callReports).toEqual({
      url: "https://reports.example.com/calls",
      secret: "0123456789abcdef",
      dir: "/var/spool/vb",
    });
    expect(() => loadConfig({ env: { CALL_REPORT_URL: "https://reports.example.com/calls" } })).toThrow(
      /callReports\.secret: required when callReports\.url \(CALL_REPORT_URL\) is set: set CALL_REPORT_SECRET/,
    );
    expect(() =>
      loadConfig({ env: { CALL_REPORT_URL: "reports", CALL_REPORT_SECRET: "0123456789abcdef" } }),
    ).toThrow(/environment variable CALL_REPORT_URL \(callReports\.url\): expected an absolute URL/);
    expect(() =>
      loadConfig({
        env: { CALL_REPORT_URL: "https://reports.example.com/calls", CALL_REPORT_SECRET: "short" },
      }),
    ).toThrow(
      /environment variable CALL_REPORT_SECRET \(callReports\.secret\): expected a secret of at least 16/,
    );
    const file = tmpFile("r.yaml", "callReports:\n  url: https://reports.example.com/calls\n");
    expect(() => loadConfig({ file, env: {} })).toThrow(`${file}: callReports.secret: required when`);
  });

  it("says when a config file is unreadable or malformed", () => {
    expect(() => loadConfig({ file: "/nonexistent/c.yaml", env: {} })).toThrow(/cannot read it/);
    expect(() => loadConfig({ file: tmpFile("x.json", "{oops"), env: {} })).toThrow(/not valid JSON/);
    expect(() => loadConfig({ file: tmpFile("x.yaml", "- a\n- b\n"), env: {} })).toThrow(
      /expected a mapping/,
    );
  });
  it("reads the SIP, AudioSocket and Discord sections, with their defaults", () => {
    const d = loadConfig({ env: {} });
    expect(d.sip).toEqual({
      port: 5060,
      host: "0.0.0.0",
      rtpPorts: "10000-20000",
      codecs: ["opus", "pcmu", "pcma"],
      mediaTimeoutS: 30,
      rtpThread: "worker",
      allowFrom: ["127.0.0.0/8", "::1/128", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"],
      rateLimit: 50,
      users: [],
      digestAlgorithms: ["MD5"],
      registrations: [],
      tlsPort: false,
      tlsVerify: true,
      srtp: "optional",
    });
    expect(d.audiosocket.port).toBe(false);
    expect(d.discord).toMatchObject({ autoJoin: [], respondTo: "all", textLog: false });
    expect(d.discord.token).toBeUndefined();
    const c = loadConfig({
      env: {
        SIP_PORT: "off",
        SIP_CODECS: " PCMA,pcmu ",
        SIP_PUBLIC_IP: "203.0.113.7",
        SIP_RTP_THREAD: "main",
        AUDIOSOCKET_PORT: "9092",
        DISCORD_TOKEN: "t",
        DISCORD_AUTO_JOIN: "123456789012345678, 223456789012345678",
        DISCORD_RESPOND_TO: "mention",
        DISCORD_SHARDS: "auto",
      },
    });
    expect(c.sip.port).toBe(false);
    expect(c.sip.codecs).toEqual(["pcma", "pcmu"]);
    expect(c.sip.publicIp).toBe("203.0.113.7");
    expect(c.sip.rtpThread).toBe("main");
    expect(c.audiosocket.port).toBe(9092);
    expect(c.discord).toMatchObject({
      token: "t",
      autoJoin: ["123456789012345678", "223456789012345678"],
      respondTo: "mention",
      shards: "auto",
    });
  });

  it("names the variable and what was wrong for bad SIP and Discord values", () => {
    expect(() => loadConfig({ env: { SIP_CODECS: "g729" } })).toThrow(
      /environment variable SIP_CODECS \(sip\.codecs\.0\): expected codecs among opus, pcmu, pcma/,
    );
    expect(() => loadConfig({ env: { RTP_PORTS: "20000-10000" } })).toThrow(/RTP_PORTS .*LOW below HIGH/);
    expect(() => loadConfig({ env: { SIP_PUBLIC_IP: "bridge.example.com" } })).toThrow(
      /SIP_PUBLIC_IP .*expected an IPv4 address/,
    );
    expect(() => loadConfig({ env: { SIP_RTP_THREAD: "thread" } })).toThrow(
      /SIP_RTP_THREAD .*expected worker or main/,
    );
    expect(() => loadConfig({ env: { DISCORD_RESPOND_TO: "some" } })).toThrow(/DISCORD_RESPOND_TO/);
    expect(() => loadConfig({ env: { DISCORD_AUTO_JOIN: "general" } })).toThrow(
      /DISCORD_AUTO_JOIN .*expected a channel id/,
    );
  });
});
