// The SIP access keys as users write them: environment strings, config-file lists and objects,
// and errors that name the key and say what is wrong.
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/config.ts";

describe("sip access configuration", () => {
  it("reads SIP_ALLOW_FROM, SIP_RATE_LIMIT, SIP_USERS, SIP_DIGEST_ALGORITHMS and SIP_REGISTER", () => {
    const c = loadConfig({
      env: {
        SIP_ALLOW_FROM: "203.0.113.0/24, 2001:db8::/32 198.51.100.7",
        SIP_RATE_LIMIT: "10",
        SIP_USERS: "alice:pa:ss,bob:x",
        SIP_DIGEST_ALGORITHMS: "sha-256,md5",
        SIP_REGISTER:
          "sip:1001:p%40ss@pbx.example.com;expires=300 sip:trunk:pw@[2001:db8::1]:5080;transport=tcp sips:ext:pw@sip.example.net",
      },
    });
    expect(c.sip.allowFrom).toEqual(["203.0.113.0/24", "2001:db8::/32", "198.51.100.7"]);
    expect(c.sip.rateLimit).toBe(10);
    expect(c.sip.users).toEqual([
      { user: "alice", password: "pa:ss" },
      { user: "bob", password: "x" },
    ]);
    expect(c.sip.digestAlgorithms).toEqual(["SHA-256", "MD5"]);
    expect(c.sip.registrations).toEqual([
      {
        user: "1001",
        password: "p@ss",
        registrar: { host: "pbx.example.com" },
        transport: "udp",
        expires: 300,
      },
      {
        user: "trunk",
        password: "pw",
        registrar: { host: "2001:db8::1", port: 5080 },
        transport: "tcp",
        expires: 3600,
      },
      {
        user: "ext",
        password: "pw",
        registrar: { host: "sip.example.net" },
        transport: "tls",
        expires: 3600,
      },
    ]);
    expect(loadConfig({ env: { SIP_ALLOW_FROM: "any" } }).sip.allowFrom).toEqual(["any"]);
  });

  it("takes objects from a config file's lists", () => {
    const c = loadConfig({
      env: {},
      overrides: {},
    });
    expect(c.sip.registrations).toEqual([]);
    const withFile = loadConfig({
      env: {},
      file: writeYaml(
        [
          "sip:",
          "  users: ['alice:secret', {user: bob, password: hunter2}]",
          "  registrations:",
          "    - user: '1001'",
          "      password: s3cret",
          "      registrar: pbx.example.com:5070",
          "      authUser: auth1001",
          "      outboundProxy: proxy.example.com",
          "      transport: tcp",
          "      expires: 600",
        ].join("\n"),
      ),
    });
    expect(withFile.sip.users).toEqual([
      { user: "alice", password: "secret" },
      { user: "bob", password: "hunter2" },
    ]);
    expect(withFile.sip.registrations).toEqual([
      {
        user: "1001",
        password: "s3cret",
        registrar: { host: "pbx.example.com", port: 5070 },
        authUser: "auth1001",
        outboundProxy: { host: "proxy.example.com" },
        transport: "tcp",
        expires: 600,
      },
    ]);
  });

  it("says which key is wrong and why", () => {
    const bad = (env: Record<string, string>): string => {
      try {
        loadConfig({ env });
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
      throw new Error("expected a ConfigError");
    };
    expect(bad({ SIP_ALLOW_FROM: "10.0.0.0/33" })).toMatch(/SIP_ALLOW_FROM.*prefix must be 0-32/);
    expect(bad({ SIP_ALLOW_FROM: "example.com" })).toMatch(/SIP_ALLOW_FROM.*not an address or CIDR range/);
    expect(bad({ SIP_USERS: "alice" })).toMatch(/SIP_USERS.*not user:password/);
    expect(bad({ SIP_REGISTER: "sip:pbx.example.com" })).toMatch(/SIP_REGISTER.*user:password@/);
    expect(bad({ SIP_REGISTER: "sip:a:b@pbx;transport=sctp" })).toMatch(
      /transport=sctp: expected udp, tcp or tls/,
    );
    expect(bad({ SIP_REGISTER: "sip:a:b@pbx;expires=5" })).toMatch(/expires=5/);
    expect(bad({ SIP_DIGEST_ALGORITHMS: "SHA-1" })).toMatch(/SIP_DIGEST_ALGORITHMS.*MD5 or SHA-256/);
    expect(bad({ SIP_RATE_LIMIT: "-1" })).toMatch(/SIP_RATE_LIMIT/);
    expect(bad({ SIP_TLS_PORT: "5061" })).toMatch(/sip\.tlsCert.*SIP_TLS_CERT/);
    expect(bad({ SIP_SRTP: "always" })).toMatch(/SIP_SRTP.*off, optional or required/);
  });
});

import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

function writeYaml(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), "vb-sipcfg-")), "config.yaml");
  writeFileSync(file, text);
  return file;
}
