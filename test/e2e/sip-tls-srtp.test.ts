// SIP over TLS with SRTP mandatory (SDES, libsrtp2 on both ends): baresip calls the bridge's TLS
// port with ;mediaenc=srtp-mand on PCMU and on Opus; the call is answered, the phone hears the
// agent's greeting, the agent hears the caller (a user turn), and every RTP packet between them,
// captured by a relay the test puts in the media path, is encrypted: no payload repeats (plain
// silence would) and PCMU packets carry the 10-byte tag. A plain-RTP phone gets 488.
//
// The capture: the bridge advertises 127.0.0.5 (SIP_PUBLIC_IP) while it listens on 127.0.0.1, and
// has one RTP port; the test listens on 127.0.0.5 at that port (UDP, forwarding both ways) and at
// the TLS port (TCP, passed through unread).
import { createSocket, type RemoteInfo } from "node:dgram";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bridge, startBridge } from "../../app/bridge/start.ts";
import { concatPcm, levelDbfs } from "../../codecs/pcm.ts";
import { encodeWav, parseWav } from "../../codecs/wav.ts";
import { loadConfig } from "../../src/config/config.ts";
import { Baresip, type BaresipCodec } from "../helpers/baresip.ts";
import { selfSignedCertificate } from "../helpers/certificate.ts";
import { speak } from "../helpers/speech.ts";
import { until } from "../helpers/until.ts";

const RTP_PORT = 34_600;
const SHOWN = "127.0.0.5";
let dir: string;
let cert: string;
let bridge: Bridge;
let tcpRelay: Server;
const logged: { msg: string; callId?: string }[] = [];
/** Datagrams seen by the relay, per direction. */
const captured: { toBridge: Buffer[]; toPhone: Buffer[] } = { toBridge: [], toPhone: [] };
const relay = createSocket("udp4");

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-sip-srtp-"));
  const pair = selfSignedCertificate(dir, ["127.0.0.1", SHOWN]);
  cert = pair.cert;
  const key = pair.key;
  const config = loadConfig({
    env: {
      HOST: "127.0.0.1",
      PORT: "0",
      SIP_HOST: "127.0.0.1",
      SIP_PORT: "0",
      SIP_PUBLIC_IP: SHOWN,
      SIP_TLS_PORT: "0",
      SIP_TLS_CERT: cert,
      SIP_TLS_KEY: key,
      SIP_SRTP: "required",
      RTP_PORTS: `${RTP_PORT}-${RTP_PORT + 1}`,
      SVC_LOCAL_DATA_DIR: join(dir, "data"),
      AGENT_GREETING: "Thanks for calling. How can I help?",
    },
  });
  const sink = { write: (line: string) => void logged.push(JSON.parse(line)) };
  bridge = await startBridge(config, pino({ level: "info" }, sink));
  const tlsPort = bridge.sip!.tlsPort!;
  tcpRelay = createServer((inbound) => {
    const out = connect(tlsPort, "127.0.0.1");
    inbound.pipe(out).pipe(inbound);
    inbound.on("error", () => out.destroy());
    out.on("error", () => inbound.destroy());
  });
  await new Promise<void>((resolve) => tcpRelay.listen(tlsPort, SHOWN, resolve));
  let phone: RemoteInfo | undefined;
  relay.on("message", (msg, from) => {
    if (from.address === "127.0.0.1" && from.port === RTP_PORT) {
      captured.toPhone.push(Buffer.from(msg));
      if (phone) relay.send(msg, phone.port, phone.address);
    } else {
      phone = from;
      captured.toBridge.push(Buffer.from(msg));
      relay.send(msg, RTP_PORT, "127.0.0.1");
    }
  });
  await new Promise<void>((resolve) => relay.bind(RTP_PORT, SHOWN, resolve));
}, 60_000);

afterAll(async () => {
  relay.close();
  tcpRelay?.close();
  await bridge?.close(0);
  rmSync(dir, { recursive: true, force: true });
});

const RATES: Record<BaresipCodec, number> = { pcmu: 8000, pcma: 8000, opus: 48000 };

function callerWav(codec: BaresipCodec): string {
  const rate = RATES[codec];
  const pcm = concatPcm([
    new Int16Array(rate * 1.5),
    speak("What are your opening hours?", { rate }),
    new Int16Array(rate * 20),
  ]);
  const file = join(mkdtempSync(join(dir, "caller-")), "in.wav");
  writeFileSync(file, encodeWav(pcm, rate));
  return file;
}

/** Encrypted payloads never repeat; plain silence (and most plain speech frames of a tone) would. */
function expectEncrypted(packets: Buffer[], codec: BaresipCodec): void {
  expect(packets.length).toBeGreaterThan(50);
  const payloads = new Set(packets.map((p) => p.subarray(12).toString("hex")));
  expect(payloads.size).toBe(packets.length);
  // RTP header in clear, version 2; PCMU: 12 + 160 + the 10-byte HMAC-SHA1-80 tag.
  for (const p of packets) expect(p[0]! >> 6).toBe(2);
  if (codec === "pcmu") for (const p of packets) expect(p.length).toBe(182);
}

describe.each(["pcmu", "opus"] as const)("a TLS call with SRTP mandatory on %s", (codec) => {
  it("is answered, each side hears the other, and the RTP on the wire is encrypted", async () => {
    captured.toBridge.length = 0;
    captured.toPhone.length = 0;
    const before = logged.length;
    const phone = await Baresip.start({
      codec,
      wav: callerWav(codec),
      wavRate: RATES[codec],
      accountParams: ";mediaenc=srtp-mand",
      extraConfig: [`sip_cafile ${cert}`, "module srtp.so"],
    });
    try {
      phone.dial(`sip:agent@${SHOWN}:${bridge.sip!.tlsPort};transport=tls`);
      await phone.waitFor("CALL_ESTABLISHED");
      const answered = await until(
        () => logged.slice(before).find((e) => e.msg === "sip: call answered"),
        "the call answered",
      );
      expect(answered).toMatchObject({ srtp: "AES_CM_128_HMAC_SHA1_80" });
      const callId = answered.callId!;
      // The agent heard the caller: a user turn came from its speech.
      await until(
        () => bridge.transcripts.get(callId)?.turns.some((t) => t.role === "user"),
        "a user turn",
        40_000,
      );
      phone.hangUp();
      await phone.waitFor("CALL_CLOSED");
      await phone.stop();
      const heard = parseWav(readFileSync(phone.dumps().heard!));
      expect(levelDbfs(heard.samples)).toBeGreaterThan(-45);
      expectEncrypted(captured.toBridge, codec);
      expectEncrypted(captured.toPhone, codec);
    } finally {
      await phone.stop();
    }
    // The one RTP port is free again for the next call.
    await until(() => logged.some((e, i) => i > before && e.msg === "call ended"), "the call to end");
  }, 90_000);
});

describe("SIP_SRTP=required and a plain phone", () => {
  it("refuses plain RTP with 488", async () => {
    const phone = await Baresip.start({
      codec: "pcmu",
      wav: callerWav("pcmu"),
      extraConfig: [`sip_cafile ${cert}`],
    });
    try {
      phone.dial(`sip:agent@${SHOWN}:${bridge.sip!.tlsPort};transport=tls`);
      const closed = await phone.waitFor("CALL_CLOSED");
      expect(String(closed.param)).toMatch(/488/);
    } finally {
      await phone.stop();
    }
  }, 60_000);
});
