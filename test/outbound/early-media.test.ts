// Early media on calls the bridge places, for real: SIPp as the callee behind the Kamailio trunk
// answers the INVITE with 183 Session Progress and SDP naming this test's RTP socket, which then
// plays what carriers put there (ringback, an announcement, a voicemail's greeting and beep) as
// PCMU, paced at 20 ms, to the bridge's RTP port; then SIPp sends 200 OK (with or without SDP) or
// 486. The socket also records everything the bridge sends, and when. Checked: the detector heard
// the early audio (the record's earlyMediaMs, a beep before the answer), the agent's session did
// not (no caller turn), nothing was sent before the 200, and a failure after an announcement ends
// as the final response says.
import { type ChildProcess, spawn } from "node:child_process";
import { createSocket, type Socket } from "node:dgram";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bridge, startBridge } from "../../app/bridge/start.ts";
import { buildRtp } from "../../bridges/sip/rtp/rtp-packet.ts";
import { mulawEncode } from "../../codecs/g711.ts";
import { concatPcm } from "../../codecs/pcm.ts";
import { loadConfig } from "../../src/config/config.ts";
import type { CallRecord } from "../../src/records/call-record.ts";
import { freeEvenRange } from "../bridges/sip/rtp/ports.ts";
import { until } from "../helpers/agents-fixture.ts";
import { freePort } from "../helpers/free-port.ts";
import { silence, speak } from "../helpers/speech.ts";
import { loopbackSipEnv } from "./bridge-env.ts";
import { KamailioTrunk } from "./kamailio-trunk.ts";

const RATE = 8000;
const TOKEN = "early-media-test-token-0123456789";

let dir: string;
let bridge: Bridge;
let trunk: KamailioTrunk;
let media: Socket;
/** The bridge's one RTP port (RTP_PORTS is a single port, so the test knows where to send). */
let bridgeRtpPort: number;
/** Callee ports Kamailio relays each number to; SIPp listens there during its test. */
const callees = { "2001": 0, "2002": 0, "2003": 0 };
/** The bridge's log lines, with when they were written (performance.now()). */
const logs: Array<{ at: number; msg: string; callId?: string }> = [];
/** What the bridge sent to the far end's RTP socket, with when it arrived. */
const fromBridge: Array<{ at: number; bytes: number }> = [];

type Final = { status: 200; sdp: boolean } | { status: 486 };

/** SIPp's scenario: 183 with SDP, a pause while the early media plays, then the final response. */
function scenario(final: Final, pauseMs: number, rtpPort: number): string {
  const sdp = [
    "v=0",
    "o=- 1 1 IN IP4 127.0.0.1",
    "s=-",
    "c=IN IP4 127.0.0.1",
    "t=0 0",
    `m=audio ${rtpPort} RTP/AVP 0`,
    "a=rtpmap:0 PCMU/8000",
    "a=sendrecv",
    "",
  ].join("\r\n");
  const head = (status: string) => `SIP/2.0 ${status}
[last_Via:]
[last_From:]
[last_To:];tag=[pid]early[call_number]
[last_Call-ID:]
[last_CSeq:]
[last_Record-Route:]
Contact: <sip:callee@[local_ip]:[local_port]>`;
  const withSdp = (status: string) => `${head(status)}
Content-Type: application/sdp
Content-Length: [len]

${sdp}`;
  const answer =
    final.status === 486
      ? `<send><![CDATA[
${head("486 Busy Here")}
Content-Length: 0

]]></send>
  <recv request="ACK" />`
      : `<send><![CDATA[
${final.sdp ? withSdp("200 OK") : `${head("200 OK")}\nContent-Length: 0\n`}
]]></send>
  <recv request="ACK" />
  <recv request="BYE" />
  <send><![CDATA[
SIP/2.0 200 OK
[last_Via:]
[last_From:]
[last_To:]
[last_Call-ID:]
[last_CSeq:]
Content-Length: 0

]]></send>`;
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="early media">
  <recv request="INVITE" />
  <send><![CDATA[
${withSdp("183 Session Progress")}
]]></send>
  <pause milliseconds="${pauseMs}" />
  ${answer}
</scenario>
`;
}

/** One SIPp callee for one call on `port`; resolves with its exit code (0: the scenario completed). */
async function callee(number: keyof typeof callees, final: Final, pauseMs: number) {
  const file = join(dir, `${number}.xml`);
  const rtpPort = (media.address() as { port: number }).port;
  writeFileSync(file, scenario(final, pauseMs, rtpPort));
  const args = ["-sf", file, "-i", "127.0.0.1", "-p", String(callees[number]), "-m", "1"];
  args.push("-mp", String(await freePort(true)), "-cp", String(await freePort()), "-nostdin");
  args.push("-timeout", "60s", "-timeout_error");
  const child: ChildProcess = spawn("sipp", args, { cwd: dir, stdio: "ignore" });
  return new Promise<number | null>((resolve) => child.on("close", resolve));
}

/** Plays `pcm` as PCMU RTP to the bridge, one packet every 20 ms of real time. */
async function play(pcm: Int16Array): Promise<void> {
  const t0 = performance.now();
  const ssrc = 0x5eed;
  for (let i = 0; i * 160 < pcm.length; i++) {
    const wait = t0 + i * 20 - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const payload = mulawEncode(pcm.subarray(i * 160, (i + 1) * 160));
    const packet = buildRtp({
      payloadType: 0,
      sequence: i,
      timestamp: i * 160,
      ssrc,
      payload,
      marker: i === 0,
    });
    media.send(packet, bridgeRtpPort, "127.0.0.1");
  }
}

function dual(a: number, b: number, ms: number): Int16Array {
  const out = new Int16Array((ms * RATE) / 1000);
  for (let i = 0; i < out.length; i++)
    out[i] = Math.round(
      3000 * Math.sin((2 * Math.PI * a * i) / RATE) + 3000 * Math.sin((2 * Math.PI * b * i) / RATE),
    );
  return out;
}

function beep(hz: number, ms: number): Int16Array {
  const out = new Int16Array((ms * RATE) / 1000);
  for (let i = 0; i < out.length; i++) out[i] = Math.round(7000 * Math.sin((2 * Math.PI * hz * i) / RATE));
  return out;
}

const ms = (pcm: Int16Array) => (pcm.length / RATE) * 1000;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "early-media-"));
  media = createSocket("udp4");
  await new Promise<void>((r) => media.bind(0, "127.0.0.1", r));
  media.on("message", (msg) => fromBridge.push({ at: performance.now(), bytes: msg.length }));
  for (const n of Object.keys(callees) as (keyof typeof callees)[]) callees[n] = await freePort();
  const trunkPort = await freePort();
  trunk = await KamailioTrunk.start({
    dir,
    port: trunkPort,
    user: "bridge",
    password: "trunk-secret",
    callees: Object.fromEntries(Object.entries(callees).map(([n, port]) => [n, { user: "callee", port }])),
  });
  bridgeRtpPort = await freeEvenRange(1);
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split("\n").filter(Boolean)) {
        const j = JSON.parse(line) as { msg: string; callId?: string };
        logs.push({ at: performance.now(), msg: j.msg, ...(j.callId ? { callId: j.callId } : {}) });
      }
      done();
    },
  });
  bridge = await startBridge(
    loadConfig({
      env: {
        ...loopbackSipEnv({ token: TOKEN, rtpPorts: `${bridgeRtpPort}-${bridgeRtpPort + 1}`, dir }),
        AGENT_GREETING: "Hello, this is the clinic calling about your appointment.",
        SIP_OUTBOUND_PROXY: `sip:127.0.0.1:${trunkPort}`,
        SIP_OUTBOUND_USER: "bridge",
        SIP_OUTBOUND_PASSWORD: "trunk-secret",
        SIP_OUTBOUND_FROM: "+15550100",
      },
    }),
    pino({ level: "info" }, sink),
  );
}, 90_000);

afterAll(async () => {
  await bridge?.close(0);
  await trunk?.stop();
  media?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function dial(body: Record<string, unknown>): Promise<string> {
  const res = await fetch(`${bridge.url}/calls`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ via: "sip", ...body }),
  });
  const json = (await res.json()) as { callId: string };
  expect(res.status, JSON.stringify(json)).toBe(202);
  return json.callId;
}

/** When the bridge logged `msg` for the call (performance.now()). */
async function logged(callId: string, msg: string): Promise<number> {
  return until(
    () => logs.find((l) => l.callId === callId && l.msg === msg)?.at,
    `"${msg}" for ${callId}`,
    30_000,
  );
}

async function ended(callId: string): Promise<CallRecord> {
  return until(
    () => {
      const r = bridge.transcripts.get(callId);
      return r?.endedAt ? r : undefined;
    },
    `the end of ${callId}`,
    40_000,
  );
}

const EARLY = "sip: early media: heard by the detector, not the agent, until the answer";
const ANSWERED = "sip: outbound call answered";
const MEDIA_ENDED = "RTP media ended";

describe("early media on outbound SIP calls (SIPp behind the Kamailio trunk)", () => {
  it("a voicemail that plays its greeting and beep as early media, then answers: machine at once, the message right after the 200, nothing sent before it", async () => {
    const greeting = speak("Hi, you have reached Morgan. Please leave a message after the tone.", {
      rate: RATE,
      voice: "en-gb",
    });
    const early = concatPcm([
      dual(440, 480, 1000),
      silence(500, RATE),
      greeting,
      silence(400, RATE),
      beep(1000, 500),
      silence(200, RATE),
    ]);
    const sipp = callee("2001", { status: 200, sdp: true }, ms(early) + 700);
    fromBridge.length = 0;
    const callId = await dial({
      to: "2001",
      machineDetection: "message",
      voicemailMessage: "Please call the clinic.",
    });
    await logged(callId, EARLY);
    await play(early);
    const answeredAt = await logged(callId, ANSWERED);
    const record = await ended(callId);
    // The send thread paces silence until the call's stream is closed, which the record's end
    // does not wait for; the next test counts every packet, so this call's last one must be out.
    await logged(callId, MEDIA_ENDED);
    expect(await sipp).toBe(0);
    expect(record).toMatchObject({ direction: "outbound", dialOutcome: "machine" });
    expect(record.amd).toMatchObject({ result: "machine", by: "bridge" });
    // The beep was heard before the answer, and decided on at once.
    expect(record.amd!.beepEndedAtMs, JSON.stringify(record.events)).toBeLessThan(0);
    expect(record.amd!.beepEndedAtMs).toBeGreaterThan(-1500);
    expect(record.amd!.decidedAfterMs).toBeLessThan(600);
    // The message went on the line straight after the answer: the beep was already over.
    expect(record.amd!.messageStartedAtMs).toBeLessThan(600);
    expect(record.earlyMediaMs).toBeGreaterThan(ms(early) - 600);
    expect(record.turns).toEqual([
      expect.objectContaining({ role: "assistant", generated: "Please call the clinic." }),
    ]);
    // Nothing went to the far end before the 200; the answered call's media did after it.
    expect(fromBridge.filter((p) => p.at < answeredAt)).toEqual([]);
    expect(fromBridge.length).toBeGreaterThan(0);
    expect(trunk.lines().some((l) => /TRUNK INVITE 2001 .* authorized as bridge/.test(l))).toBe(true);
  }, 60_000);

  it("an announcement in early media then 486: busy as the final response says, the early media recorded", async () => {
    const announcement = speak(
      "The number you have dialed is not in service. Please check the number and dial again.",
      {
        rate: RATE,
      },
    );
    const early = concatPcm([beep(914, 300), beep(1371, 300), beep(1777, 300), announcement]);
    const sipp = callee("2002", { status: 486 }, ms(early) + 300);
    fromBridge.length = 0;
    const callId = await dial({ to: "2002", machineDetection: "message" });
    await logged(callId, EARLY);
    await play(early);
    const record = await ended(callId);
    expect(await sipp).toBe(0);
    expect(record).toMatchObject({ dialOutcome: "busy", dialReason: "486 Busy Here" });
    expect(record.amd).toBeUndefined();
    expect(record.earlyMediaMs).toBeGreaterThan(ms(early) - 600);
    expect(record.turns).toEqual([]);
    expect(fromBridge).toEqual([]);
  }, 60_000);

  it("speech in early media right up to a 200 without SDP: the 183's media becomes the call's, the session never hears the early audio", async () => {
    const announcement = speak("This call may be recorded for quality and training purposes. Please hold.", {
      rate: RATE,
    });
    const sipp = callee("2003", { status: 200, sdp: false }, ms(announcement) + 100);
    fromBridge.length = 0;
    const callId = await dial({ to: "2003", machineDetection: "off" });
    await logged(callId, EARLY);
    await play(announcement);
    const answeredAt = await logged(callId, ANSWERED);
    // The agent's greeting reaches the far end over the early media's path.
    const record = await until(
      () => {
        const r = bridge.transcripts.get(callId);
        return r?.turns.some((t) => t.role === "assistant") ? r : undefined;
      },
      "the agent's greeting",
      30_000,
    );
    await until(() => fromBridge.length >= 50, "the agent's audio at the far end", 20_000);
    expect(fromBridge.filter((p) => p.at < answeredAt)).toEqual([]);
    // Time for a turn to form had the announcement leaked into the session. A quiet window, not
    // a wait on a condition: a turn that never forms leaves no event to wait for.
    await new Promise((r) => setTimeout(r, 3000));
    await fetch(`${bridge.url}/calls/${callId}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const done = await ended(callId);
    expect(await sipp).toBe(0);
    expect(record).toMatchObject({ dialOutcome: "human" });
    expect(done.earlyMediaMs).toBeGreaterThan(ms(announcement) - 600);
    expect(done.turns.filter((t) => t.role === "user")).toEqual([]);
  }, 60_000);
});
