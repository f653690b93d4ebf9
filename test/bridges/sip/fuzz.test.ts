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
  it("survives hostile datagrams and TCP streams, leaks nothing, and still takes a normal call", async () => {
    rig = await startServerRig({ timers: { t1: 20, t2: 160, t4: 200 } });
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
