// Hostile input: random and mangled datagrams and TCP streams must never take the server down,
// leak a dialog or a port, or keep a normal call (SIPp's own UAC) from succeeding afterwards.
import { createSocket } from "node:dgram";
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { seededBytes, seededRandom } from "../../helpers/noise.ts";
import { OFFER } from "./core-rig.ts";
import { type ServerRig, startServerRig } from "./server-rig.ts";
import { runSipp } from "./sipp.ts";

let rig: ServerRig | undefined;
afterEach(async () => {
  await rig?.server.close();
  rig = undefined;
});

function invite(n: number, port: number): string {
  return [
    `INVITE sip:agent@127.0.0.1:${port} SIP/2.0`,
    `Via: SIP/2.0/UDP 127.0.0.1:9;branch=z9hG4bKfuzz${n};rport`,
    `From: <sip:fuzz@127.0.0.1>;tag=f${n}`,
    "To: <sip:agent@127.0.0.1>",
    `Call-ID: fuzz-${n}`,
    "CSeq: 1 INVITE",
    "Contact: <sip:fuzz@127.0.0.1:9>",
    "Content-Type: application/sdp",
    `Content-Length: ${OFFER.length}`,
    "",
    OFFER,
  ].join("\r\n");
}

/** Hostile variants of a valid INVITE: cut, bit-flipped, with lying lengths, NULs, junk headers. */
function mangled(rand: () => number, n: number, port: number): Buffer {
  const base = Buffer.from(invite(n, port));
  const pick = Math.floor(rand() * 9);
  switch (pick) {
    case 0:
      return base.subarray(0, Math.floor(rand() * base.length));
    case 1: {
      const b = Buffer.from(base);
      for (let i = 0; i < 8; i++) b[Math.floor(rand() * b.length)] = Math.floor(rand() * 256);
      return b;
    }
    case 2:
      return Buffer.from(
        base.toString().replace(/Content-Length: \d+/, `Content-Length: ${Math.floor(rand() * 1e12)}`),
      );
    case 3:
      return Buffer.from(base.toString().replace(/(Call-ID|Via|CSeq|From|To): [^\r]*\r\n/, ""));
    case 4:
      return Buffer.from(base.toString().replace("Contact:", `X-Long: ${"a".repeat(60_000)}\r\nContact:`));
    case 5:
      return Buffer.from(base.toString().replace("CSeq: 1 INVITE", "CSeq: 1 BYE"));
    case 6:
      return Buffer.concat([base.subarray(0, 40), Buffer.from([0, 0xff, 0xfe, 0]), base.subarray(40)]);
    case 7:
      return Buffer.from(
        base.toString().replace(/v=0[\s\S]*/, Buffer.from(seededBytes(200, n)).toString("latin1")),
      );
    default:
      return Buffer.from(seededBytes(1 + Math.floor(rand() * 1500), n));
  }
}

async function tcpSession(port: number, chunks: Buffer[]): Promise<string> {
  const sock: Socket = connect(port, "127.0.0.1");
  let got = "";
  sock.on("data", (d: Buffer) => {
    got += d.toString("latin1");
  });
  sock.on("error", () => {});
  await new Promise<void>((resolve) => sock.once("connect", () => resolve()));
  for (const c of chunks) sock.write(c);
  await new Promise<void>((resolve) => {
    sock.once("close", () => resolve());
    sock.end();
  });
  return got;
}

describe("fuzzing the SIP server", () => {
  it("closes a TCP connection it cannot read, though the peer keeps its side open", async () => {
    rig = await startServerRig({ sip: { rateLimit: 0 } });
    const options = `OPTIONS sip:agent@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:9;branch=z9hG4bKtcp2\r\nFrom: <sip:p@x>;tag=1\r\nTo: <sip:agent@127.0.0.1>\r\nCall-ID: tcp-2\r\nCSeq: 1 OPTIONS\r\nContent-Length: 99999999\r\n\r\n`;
    for (const junk of [Buffer.from(options), Buffer.alloc(70_000, 0x62)]) {
      // allowHalfOpen: the server's FIN does not end this side, as with a peer that never closes.
      const sock: Socket = connect({ port: rig.server.tcpPort, host: "127.0.0.1", allowHalfOpen: true });
      let got = "";
      sock.on("data", (d: Buffer) => {
        got += d.toString("latin1");
      });
      sock.on("error", () => {});
      await new Promise<void>((resolve) => sock.once("connect", () => resolve()));
      const ended = new Promise<void>((resolve) => sock.once("end", () => resolve()));
      sock.write(junk);
      await ended;
      if (junk.length < 1000) expect(got).toMatch(/^SIP\/2\.0 400 /);
      // This side is still open: the server's must be gone all the same.
      await expect.poll(() => rig!.server.tcpConnections).toBe(0);
      sock.destroy();
    }
  });

  it("survives hostile datagrams and TCP streams, leaks nothing, and still takes a normal call", async () => {
    // Reading is fuzzed here, not the per-source limiter (access-sipp.test.ts): 650 requests from
    // one address in a few seconds would be over it.
    rig = await startServerRig({ timers: { t1: 20, t2: 160, t4: 200 }, sip: { rateLimit: 0 } });
    const { server } = rig;
    const port = server.udpPort;
    const rand = seededRandom(20261123);
    const udp = createSocket("udp4");
    await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", () => resolve()));
    let replies = 0;
    udp.on("message", () => replies++);
    // One datagram in flight at a time: this process is also the server, so a burst would only
    // overflow its own socket buffer and test nothing.
    const send = async (b: Buffer): Promise<void> => {
      const before = server.stats.received;
      await new Promise<void>((resolve) => udp.send(b, port, "127.0.0.1", () => resolve()));
      const deadline = Date.now() + 5_000;
      while (server.stats.received === before && Date.now() < deadline)
        await new Promise((r) => setImmediate(r));
    };

    await send(Buffer.alloc(65_507, 0x41));
    await send(Buffer.alloc(0));
    await send(Buffer.from("\r\n\r\n"));
    for (let n = 0; n < 600; n++) await send(mangled(rand, n, port));

    // TCP: a ping (pong expected) then a valid OPTIONS on the same connection.
    const options = `OPTIONS sip:agent@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:9;branch=z9hG4bKtcp1\r\nFrom: <sip:p@x>;tag=1\r\nTo: <sip:agent@127.0.0.1>\r\nCall-ID: tcp-1\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n`;
    const pong = await tcpSession(server.tcpPort, [
      Buffer.from("\r\n\r\n"),
      Buffer.from(options.slice(0, 30)),
      Buffer.from(options.slice(30)),
    ]);
    expect(pong.startsWith("\r\nSIP/2.0 200 OK\r\n")).toBe(true);
    // A lying Content-Length gets 400 and the connection closed; junk and half messages just close.
    const huge = await tcpSession(server.tcpPort, [
      Buffer.from(options.replace("Content-Length: 0", "Content-Length: 99999999")),
    ]);
    expect(huge).toMatch(/^SIP\/2\.0 400 /);
    await tcpSession(server.tcpPort, [Buffer.alloc(70_000, 0x62)]);
    await tcpSession(server.tcpPort, [Buffer.from(invite(9999, port).slice(0, 300))]);
    for (let i = 0; i < 20; i++) await tcpSession(server.tcpPort, [Buffer.from(seededBytes(3000, 100 + i))]);
    for (let i = 0; i < 50; i++) await tcpSession(server.tcpPort, [mangled(rand, 1000 + i, port)]);

    await expect.poll(() => server.stats.received, { timeout: 10_000 }).toBeGreaterThan(603);
    expect(server.stats.internalErrors).toBe(0);
    expect(server.stats.dropped).toBeGreaterThan(0);
    expect(server.stats.badRequests).toBeGreaterThan(0);
    expect(replies).toBeGreaterThan(0);

    // Some mangled INVITEs were still valid calls: they must be cleaned up like any other.
    expect(rig.pool.opened).toBeGreaterThan(0);
    const sipp = await runSipp({
      scenario: { builtin: "uac" },
      target: `127.0.0.1:${port}`,
      args: ["-m", "5", "-l", "5"],
    });
    expect(sipp.code, `${sipp.errors}\n${sipp.output}`).toBe(0);
    udp.close();
    // The mangled INVITEs that were still valid became calls nobody ACKs: 64*T1 later they are gone.
    await expect.poll(() => server.stats.dialogs, { timeout: 20_000 }).toBe(0);
    await expect.poll(() => rig!.pool.inUse, { timeout: 20_000 }).toBe(0);
    expect(server.stats.internalErrors).toBe(0);
  }, 180_000);
});

/** An INVITE carrying `authorization` (raw header value). */
function inviteWith(n: number, port: number, authorization: string): Buffer {
  return Buffer.from(
    invite(n, port).replace("Contact:", `Authorization: ${authorization}\r\nContact:`),
    "latin1",
  );
}

describe("fuzzing digest and registration", () => {
  it("hostile Authorization headers get 401 or 403 (never a call, never a throw)", async () => {
    rig = await startServerRig({ sip: { rateLimit: 0, users: [{ user: "alice", password: "pw" }] } });
    const { server } = rig;
    const port = server.udpPort;
    const rand = seededRandom(2411);
    const udp = createSocket("udp4");
    await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", () => resolve()));
    const statuses: number[] = [];
    udp.on("message", (m: Buffer) => {
      const status = /^SIP\/2\.0 (\d{3})/.exec(m.toString("latin1"))?.[1];
      if (status && status !== "100") statuses.push(Number(status));
    });
    const base =
      'Digest username="alice", realm="voice-bridge", nonce="1.2.3", uri="sip:agent@127.0.0.1", response="0123456789abcdef0123456789abcdef", qop=auth, nc=00000001, cnonce="x"';
    const cases = [
      "",
      "Digest",
      "Basic YWxpY2U6cHc=",
      `Digest username="${"a".repeat(60_000)}"`,
      `${base}, algorithm=SHA-512-256`,
      `${base}, algorithm=AKAv1-MD5`,
      base.replace('"alice"', '"alice'),
      `${base}, username="bob"`,
      base.replace("nc=00000001", "nc=zz"),
      base.replace("qop=auth", "qop=auth-int"),
      base.replace(/nonce="[^"]*"/, `nonce="${"9".repeat(200)}.${"x".repeat(50)}"`),
      base.replace(/nonce="[^"]*"/, 'nonce="zzzzzzzzzzzzzzzzzzzzzzzzzzzzz"'),
      "Digest ,,,,",
      'Digest realm="voice-bridge", nonce=',
      'Digest \u0000\u0001 realm="voice-bridge"',
    ];
    for (let i = 0; i < 60; i++)
      cases.push(
        Buffer.from(seededBytes(1 + Math.floor(rand() * 300), 500 + i))
          .toString("latin1")
          .replace(/[\r\n]/g, " "),
      );
    for (const [n, h] of cases.entries()) {
      const before = server.stats.received;
      udp.send(inviteWith(5000 + n, port, h), port, "127.0.0.1");
      await expect.poll(() => server.stats.received).toBeGreaterThan(before);
    }
    await expect.poll(() => statuses.length, { timeout: 10_000 }).toBeGreaterThanOrEqual(cases.length - 2);
    expect(statuses.every((s) => s === 401 || s === 403 || s === 400)).toBe(true);
    expect(server.stats.calls).toBe(0);
    expect(rig.pool.opened).toBe(0);
    expect(server.stats.internalErrors).toBe(0);
    udp.close();
  }, 60_000);

  it("a registrar answering garbage: each attempt fails and is retried until a readable 200", async () => {
    // A hostile registrar: every REGISTER gets the next of these answers (its Via, Call-ID and CSeq copied).
    const registrar = createSocket("udp4");
    await new Promise<void>((resolve) => registrar.bind(0, "127.0.0.1", () => resolve()));
    const answers = [
      "SIP/2.0 401 Unauthorized\r\nWWW-Authenticate: Digest\r\n",
      "SIP/2.0 401 Unauthorized\r\n",
      `SIP/2.0 401 Unauthorized\r\nWWW-Authenticate: Digest realm="r", nonce="${"n".repeat(5000)}"\r\n`,
      'SIP/2.0 407 Proxy Authentication Required\r\nProxy-Authenticate: Digest realm="r", nonce="n", algorithm=SHA-512-256\r\n',
      'SIP/2.0 401 Unauthorized\r\nWWW-Authenticate: Digest realm="r", nonce="n", qop="auth-int"\r\n',
      "SIP/2.0 423 Interval Too Brief\r\nMin-Expires: 99999999999\r\n",
      "SIP/2.0 423 Interval Too Brief\r\nMin-Expires: -1\r\n",
      "SIP/2.0 999 Whatever\r\n",
      "SIP/2.0 200 OK\r\nExpires: 0\r\n",
      // Unreadable expiries: what was asked for (60 s) stands.
      "SIP/2.0 200 OK\r\nContact: garbage<<>>;expires=abc\r\nExpires: -5\r\n",
    ];
    let i = 0;
    registrar.on("message", (m: Buffer, from) => {
      const text = m.toString("latin1");
      const copy = text
        .split("\r\n")
        .filter((l) => /^(Via|From|To|Call-ID|CSeq):/i.test(l))
        .join("\r\n");
      const answer = answers[i++ % answers.length]!;
      const reply = answer.replace(/\r\n/, `\r\n${copy}\r\n`);
      registrar.send(Buffer.from(`${reply}Content-Length: 0\r\n\r\n`, "latin1"), from.port, from.address);
    });
    rig = await startServerRig({
      sip: {
        registrations: [
          {
            user: "u",
            password: "p",
            registrar: { host: "127.0.0.1", port: registrar.address().port },
            transport: "udp",
            expires: 60,
          },
        ],
      },
      registrationTiming: { backoffMs: { first: 20, max: 40 }, watchMs: 1000 },
      timers: { t1: 20, t2: 160, t4: 200 },
    });
    // Every answer but the last fails the attempt (some after a second, answered, REGISTER).
    await expect.poll(() => rig!.server.registrations()[0]!.state, { timeout: 20_000 }).toBe("registered");
    expect(i).toBe(answers.length);
    expect(rig.server.registrations()[0]).toMatchObject({ expiresS: 60 });
    expect(rig.server.stats.internalErrors).toBe(0);
    registrar.close();
  }, 60_000);
});
