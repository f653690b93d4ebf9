// Digest as both ends use it: RFC 7616's own example vectors, the client answering our server's
// challenge, and the server's verdicts (stale, another source, replay, wrong password, bad headers).
import { describe, expect, it } from "vitest";
import {
  DigestClient,
  DigestServer,
  digestResponse,
  parseAuthHeader,
  parseChallenge,
} from "../../../bridges/sip/digest.ts";

describe("digest response (RFC 7616 §3.9.1 example)", () => {
  const input = {
    username: "Mufasa",
    realm: "http-auth@example.org",
    password: "Circle of Life",
    method: "GET",
    uri: "/dir/index.html",
    nonce: "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v",
    qop: { nc: "00000001", cnonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ" },
  };
  it("MD5 and SHA-256 give the RFC's values", () => {
    expect(digestResponse({ ...input, algorithm: "MD5" })).toBe("8ca523f5e9506fed4657c9700eebdbec");
    expect(digestResponse({ ...input, algorithm: "SHA-256" })).toBe(
      "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1",
    );
  });
});

describe("digest server and client", () => {
  let now = 1_000_000;
  const server = new DigestServer({
    realm: "voice-bridge",
    users: [{ user: "alice", password: "s3cret, with comma" }],
    now: () => now,
    nonceLifetimeMs: 60_000,
    algorithms: ["SHA-256", "MD5"],
  });
  const uri = "sip:agent@192.0.2.1";

  it("offers SHA-256 then MD5 with qop=auth; the client picks SHA-256 and passes", () => {
    const challenge = server.challenge("192.0.2.9");
    expect(challenge.map((c) => parseChallenge(c)?.algorithm)).toEqual(["SHA-256", "MD5"]);
    const client = new DigestClient("alice", "s3cret, with comma");
    expect(client.challenged(challenge)?.algorithm).toBe("SHA-256");
    const auth = client.authorization("INVITE", uri)!;
    expect(auth).toMatch(/algorithm=SHA-256, qop=auth, nc=00000001/);
    expect(server.verify([auth], "INVITE", uri, "192.0.2.9")).toEqual({ ok: true, user: "alice" });
    // The same credentials again (a replay: same nonce count) are not a new call.
    expect(server.verify([auth], "INVITE", uri, "192.0.2.9")).toMatchObject({
      ok: false,
      action: "challenge",
    });
    // The next request under the same nonce counts up and passes.
    expect(server.verify([client.authorization("INVITE", uri)!], "INVITE", uri, "192.0.2.9").ok).toBe(true);
  });

  it("by default only MD5 is offered (phones without SHA-256 give up on any SHA-256 challenge)", () => {
    const byDefault = new DigestServer({ realm: "r", users: [], now: () => now });
    expect(byDefault.challenge("192.0.2.9").map((c) => parseChallenge(c)?.algorithm)).toEqual(["MD5"]);
    const sha256Only = new DigestServer({
      realm: "r",
      users: [{ user: "a", password: "b" }],
      now: () => now,
      algorithms: ["SHA-256"],
    });
    const md5 = new DigestClient("a", "b");
    md5.challenged(['Digest realm="r", nonce="n", algorithm=MD5']);
    // An MD5 answer to a server that offers only SHA-256 is challenged again, not accepted.
    const auth = md5
      .authorization("INVITE", uri)!
      .replace('nonce="n"', `nonce="${/nonce="([^"]+)"/.exec(sha256Only.challenge("192.0.2.9")[0]!)![1]}"`);
    expect(sha256Only.verify([auth], "INVITE", uri, "192.0.2.9")).toMatchObject({ action: "challenge" });
  });

  it("an MD5-only client passes too", () => {
    const client = new DigestClient("alice", "s3cret, with comma");
    client.challenged([server.challenge("192.0.2.9")[1]!]);
    const auth = client.authorization("INVITE", uri)!;
    expect(auth).toContain("algorithm=MD5");
    expect(server.verify([auth], "INVITE", uri, "192.0.2.9").ok).toBe(true);
  });

  it("wrong password or unknown user: forbid; nonce from another address or forged: challenge", () => {
    const challenge = server.challenge("192.0.2.9");
    const wrong = new DigestClient("alice", "guess");
    wrong.challenged(challenge);
    expect(server.verify([wrong.authorization("INVITE", uri)!], "INVITE", uri, "192.0.2.9")).toMatchObject({
      action: "forbid",
    });
    const stranger = new DigestClient("mallory", "s3cret, with comma");
    stranger.challenged(challenge);
    expect(server.verify([stranger.authorization("INVITE", uri)!], "INVITE", uri, "192.0.2.9")).toMatchObject(
      {
        action: "forbid",
      },
    );
    const right = new DigestClient("alice", "s3cret, with comma");
    right.challenged(challenge);
    expect(server.verify([right.authorization("INVITE", uri)!], "INVITE", uri, "198.51.100.4")).toMatchObject(
      {
        action: "challenge",
        stale: false,
      },
    );
    const forged = right.authorization("INVITE", uri)!.replace(/nonce="[^"]+"/, 'nonce="123.abc"');
    expect(server.verify([forged], "INVITE", uri, "192.0.2.9")).toMatchObject({ action: "challenge" });
    // Credentials for another Request-URI do not open this one.
    expect(
      server.verify([right.authorization("INVITE", "sip:other@x")!], "INVITE", uri, "192.0.2.9"),
    ).toMatchObject({
      action: "forbid",
    });
  });

  it("an expired nonce with the right password asks for a silent retry (stale=true)", () => {
    const client = new DigestClient("alice", "s3cret, with comma");
    client.challenged(server.challenge("192.0.2.9"));
    now += 61_000;
    const verdict = server.verify([client.authorization("INVITE", uri)!], "INVITE", uri, "192.0.2.9");
    expect(verdict).toMatchObject({ ok: false, action: "challenge", stale: true });
    const fresh = server.challenge("192.0.2.9", true);
    expect(parseChallenge(fresh[0]!)?.stale).toBe(true);
    client.challenged(fresh);
    expect(server.verify([client.authorization("INVITE", uri)!], "INVITE", uri, "192.0.2.9").ok).toBe(true);
  });

  it("unreadable, huge, or unknown-algorithm headers are refused without throwing", () => {
    const bad = [
      "",
      "Digest",
      'Digest username="alice", realm="voice-bridge", nonce="unterminated',
      `Digest username="${"a".repeat(10_000)}"`,
      'Digest username="alice", username="bob"',
      "Digest ,,,,=",
      "Basic YWxpY2U6c2VjcmV0",
      'Digest username="alice", realm="voice-bridge", nonce="1.x", uri="sip:agent@192.0.2.1", response="0", algorithm=SHA-512-256',
    ];
    for (const h of bad) {
      const v = server.verify([h], "INVITE", uri, "192.0.2.9");
      expect(v.ok, h.slice(0, 60)).toBe(false);
    }
    expect(parseAuthHeader(`Digest a="${"x".repeat(5000)}"`)).toBeUndefined();
    expect(parseChallenge('Digest realm="r", nonce="n", algorithm=SHA-512-256')).toBeUndefined();
    expect(parseChallenge('Digest realm="r", nonce="n", qop="auth-int"')).toBeUndefined();
    expect(parseChallenge('Digest realm="r", nonce="n", qop="auth,auth-int"')?.qopAuth).toBe(true);
  });
});
