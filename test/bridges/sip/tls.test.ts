// SIP over TLS with real peers: baresip calls the TLS port (answered, our BYE reaches it over the
// same connection); a registration over TLS to a peer whose certificate we do not trust is
// refused unless verification is off; garbage on the TLS port (no handshake, a handshake then
// junk) closes only that connection.
import { mkdtempSync, writeFileSync } from "node:fs";
import { connect as netConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { encodeWav } from "../../../codecs/wav.ts";
import { Baresip } from "../../helpers/baresip.ts";
import { selfSignedCertificate } from "../../helpers/certificate.ts";
import { seededBytes } from "../../helpers/noise.ts";
import { type ServerRig, startServerRig } from "./server-rig.ts";

let dir: string;
let cert: string;
let key: string;
const rigs: ServerRig[] = [];
let phone: Baresip | undefined;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "vb-sip-tls-"));
  ({ cert, key } = selfSignedCertificate(dir));
});

afterEach(async () => {
  await phone?.stop();
  phone = undefined;
  for (const r of rigs.splice(0)) await r.server.close();
});

async function tlsRig(extra: Parameters<typeof startServerRig>[0] = {}): Promise<ServerRig> {
  const rig = await startServerRig({
    ...extra,
    sip: { tlsPort: 0, tlsCert: cert, tlsKey: key, ...extra.sip },
  });
  rigs.push(rig);
  return rig;
}

describe("SIP over TLS", () => {
  it("baresip calls the TLS port: answered, and our BYE reaches it on the TLS connection", async () => {
    const rig = await tlsRig();
    const wav = join(dir, "silence.wav");
    writeFileSync(wav, encodeWav(new Int16Array(8000 * 30), 8000));
    phone = await Baresip.start({ codec: "pcmu", wav, extraConfig: [`sip_cafile ${cert}`] });
    phone.dial(`sip:agent@127.0.0.1:${rig.server.tlsPort};transport=tls`);
    await phone.waitFor("CALL_ESTABLISHED");
    expect(rig.server.stats.calls).toBe(1);
    expect(rig.server.tcpConnections).toBeGreaterThanOrEqual(1);
    await rig.made[0]!.hangUp("agent said goodbye");
    await phone.waitFor("CALL_CLOSED");
    expect(rig.server.stats.dialogs).toBe(0);
  }, 60_000);

  it("a registration over TLS checks the registrar's certificate unless SIP_TLS_VERIFY=off", async () => {
    // The far end is our own stack on TLS: it answers REGISTER 405, which proves the connection.
    const registrar = await tlsRig();
    const account = {
      user: "1001",
      password: "pw",
      registrar: { host: "127.0.0.1", port: registrar.server.tlsPort! },
      transport: "tls" as const,
      expires: 60,
    };
    const timing = { backoffMs: { first: 60_000, max: 60_000 }, watchMs: 60_000 };
    const timers = { t1: 50, t2: 400, t4: 500 };
    const strict = await tlsRig({ sip: { registrations: [account] }, registrationTiming: timing, timers });
    const lax = await tlsRig({
      sip: { registrations: [account], tlsVerify: false },
      registrationTiming: timing,
      timers,
    });
    await expect.poll(() => strict.server.registrations()[0]!.state, { timeout: 15_000 }).toBe("failed");
    expect(strict.server.registrations()[0]!.detail).toMatch(/no way to the registrar: .*self.signed/i);
    await expect.poll(() => lax.server.registrations()[0]!.state, { timeout: 15_000 }).toBe("failed");
    expect(lax.server.registrations()[0]!.detail).toMatch(/^405 /);
  }, 60_000);

  it("garbage on the TLS port closes that connection only; the server still takes calls", async () => {
    const rig = await tlsRig();
    const port = rig.server.tlsPort!;
    // No handshake at all: random bytes (a partial record is dropped at the 5 s handshake timeout).
    await Promise.all(
      Array.from(
        { length: 10 },
        (_, i) =>
          new Promise<void>((resolve) => {
            const s = netConnect(port, "127.0.0.1", () => s.write(Buffer.from(seededBytes(2000, 300 + i))));
            s.resume(); // read, so the server's close is seen
            s.on("error", () => resolve());
            s.on("close", () => resolve());
          }),
      ),
    );
    // A good handshake, then junk and a lying Content-Length.
    for (const junk of [
      Buffer.from(seededBytes(5000, 7)),
      Buffer.from("OPTIONS sip:x SIP/2.0\r\nContent-Length: 999999999\r\n\r\n"),
    ]) {
      await new Promise<void>((resolve) => {
        const s = tlsConnect({ host: "127.0.0.1", port, rejectUnauthorized: false }, () => s.end(junk));
        s.on("data", () => {});
        s.on("error", () => resolve());
        s.on("close", () => resolve());
      });
    }
    expect(rig.server.stats.internalErrors).toBe(0);
    const wav = join(dir, "silence2.wav");
    writeFileSync(wav, encodeWav(new Int16Array(8000 * 30), 8000));
    phone = await Baresip.start({ codec: "pcmu", wav, extraConfig: [`sip_cafile ${cert}`] });
    phone.dial(`sip:agent@127.0.0.1:${port};transport=tls`);
    await phone.waitFor("CALL_ESTABLISHED");
    phone.hangUp();
    await phone.waitFor("CALL_CLOSED");
  }, 60_000);
});
