// The agent presses keys on SIP calls into the bridge: the model's send_dtmf after the caller's
// keys. A real phone (baresip) that negotiated telephone-event gets RFC 4733 events on the call's
// RTP, and reports each digit it decoded; SIPp, offering no telephone-event, gets one INFO per
// key (application/dtmf-relay) and its scenario checks each digit, in order.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type Bridge, startBridge } from "../../app/bridge/start.ts";
import { encodeWav } from "../../codecs/wav.ts";
import { loadConfig } from "../../src/config/config.ts";
import type { CallRecord } from "../../src/records/call-record.ts";
import { expectAllCalls, runSipp } from "../bridges/sip/sipp.ts";
import { Baresip, type BaresipCodec } from "../helpers/baresip.ts";
import { until } from "../helpers/until.ts";

let dir: string;
let bridge: Bridge;
/** Call ids in the order the bridge took them. */
const taken: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-e2e-dtmf-"));
  const scripted = join(dir, "scripted.yaml");
  writeFileSync(
    scripted,
    stringify({
      name: "menu test line",
      greeting: "Hello.",
      fallback: "Okay.",
      rules: [
        {
          intent: "press",
          when: ["keypad: 1\\b"],
          reply: "Pressing two.",
          tool: { name: "send_dtmf", arguments: { digits: "2w#" } },
          after_tool: "",
        },
      ],
    }),
  );
  const config = loadConfig({
    env: {
      HOST: "127.0.0.1",
      PORT: "0",
      SIP_HOST: "127.0.0.1",
      SIP_PORT: "0",
      RTP_PORTS: "33000-33099",
      SVC_LOCAL_DATA_DIR: join(dir, "data"),
      SVC_SCRIPTED_AGENT: scripted,
      SVC_SCRIPTED_PACE_MS: "0",
      AGENT_GREETING: "Hello.",
    },
  });
  bridge = await startBridge(config, pino({ level: process.env.E2E_LOG ?? "silent" }));
  bridge.transcripts.observe((callId, event) => {
    if (event.type === "call-start") taken.push(callId);
  });
});

afterAll(async () => {
  await bridge?.close(0);
  rmSync(dir, { recursive: true, force: true });
});

function latestCall(before: Set<string>): CallRecord | undefined {
  const callId = taken.find((id) => !before.has(id));
  return callId === undefined ? undefined : bridge.transcripts.get(callId);
}

const pressed = (r: CallRecord | undefined) =>
  r?.events.some((e) => e.type === "note" && e.text === "agent pressed 2w#");

/** A baresip phone calling the bridge on `codec`; `act` runs once the greeting is recorded. */
async function phoneCall(codec: BaresipCodec, act: (phone: Baresip, before: Set<string>) => Promise<void>) {
  const rate = codec === "opus" ? 48000 : 8000;
  const wav = join(mkdtempSync(join(dir, "caller-")), "in.wav");
  writeFileSync(wav, encodeWav(new Int16Array(rate * 20), rate));
  const before = new Set(taken);
  const phone = await Baresip.start({ codec, wav, wavRate: rate });
  try {
    phone.dial(`sip:agent@127.0.0.1:${bridge.sip!.udpPort}`);
    await phone.waitFor("CALL_ESTABLISHED");
    await until(() => latestCall(before)?.turns.length, "the greeting");
    await act(phone, before);
    const digits = await until(() => {
      const got = phone.events.filter((e) => e.type === "CALL_DTMF_START").map((e) => e.param);
      return got.length >= 2 ? got : undefined;
    }, "the phone to hear two digits");
    expect(digits).toEqual(["2", "#"]);
  } finally {
    await phone.stop();
  }
}

describe("the agent's keys on a SIP call that agreed on telephone-event (RFC 4733)", () => {
  it("pcmu: the model's send_dtmf reaches the phone as events, each digit once, in order", async () => {
    await phoneCall("pcmu", async (phone, before) => {
      phone.sendDigits("1#");
      await until(() => pressed(latestCall(before)), "the agent's keys sent");
    });
  });

  // baresip sends no telephone-event of its own on Opus calls: the keys are asked of the live
  // session here, as the TypeScript API's hooks do (call.sendDtmf), on the stream's 48 kHz clock.
  it("opus: keys asked of the live call reach the phone as events on the 48 kHz clock", async () => {
    await phoneCall("opus", async (_phone, before) => {
      const callId = taken.find((id) => !before.has(id))!;
      await bridge.liveCall(callId)!.sendDtmf("2w#");
      expect(pressed(latestCall(before))).toBe(true);
    });
  });
});

const INFO_XML = `<?xml version="1.0" encoding="ISO-8859-1" ?>
<!DOCTYPE scenario SYSTEM "sipp.dtd">
<!-- A caller offering no telephone-event: it presses 1 # by INFO, and must get 2 then # by INFO. -->
<scenario name="dtmf by info">
  <send retrans="500"><![CDATA[
INVITE sip:agent@[remote_ip]:[remote_port] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
To: agent <sip:agent@[remote_ip]:[remote_port]>
Call-ID: [call_id]
CSeq: 1 INVITE
Contact: sip:sipp@[local_ip]:[local_port]
Max-Forwards: 70
Content-Type: application/sdp
Content-Length: [len]

v=0
o=user1 53655765 2353687637 IN IP[local_ip_type] [local_ip]
s=-
c=IN IP[media_ip_type] [media_ip]
t=0 0
m=audio [media_port] RTP/AVP 0
a=rtpmap:0 PCMU/8000

]]></send>
  <recv response="100" optional="true"/>
  <recv response="180" optional="true"/>
  <recv response="200"/>
  <send><![CDATA[
ACK sip:agent@[remote_ip]:[remote_port] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
To: agent <sip:agent@[remote_ip]:[remote_port]>[peer_tag_param]
Call-ID: [call_id]
CSeq: 1 ACK
Max-Forwards: 70
Content-Length: 0

]]></send>
  <pause milliseconds="1500"/>
  <send retrans="500"><![CDATA[
INFO sip:agent@[remote_ip]:[remote_port] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
To: agent <sip:agent@[remote_ip]:[remote_port]>[peer_tag_param]
Call-ID: [call_id]
CSeq: 2 INFO
Max-Forwards: 70
Content-Type: application/dtmf-relay
Content-Length: [len]

Signal=1
Duration=160
]]></send>
  <recv response="200"/>
  <send retrans="500"><![CDATA[
INFO sip:agent@[remote_ip]:[remote_port] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
To: agent <sip:agent@[remote_ip]:[remote_port]>[peer_tag_param]
Call-ID: [call_id]
CSeq: 3 INFO
Max-Forwards: 70
Content-Type: application/dtmf-relay
Content-Length: [len]

Signal=#
Duration=160
]]></send>
  <recv response="200"/>
  <recv request="INFO" timeout="15000">
    <action>
      <ereg regexp="Signal=2" search_in="body" check_it="true" assign_to="first"/>
    </action>
  </recv>
  <send><![CDATA[
SIP/2.0 200 OK
[last_Via:]
[last_From:]
[last_To:]
[last_Call-ID:]
[last_CSeq:]
Content-Length: 0

]]></send>
  <recv request="INFO" timeout="5000">
    <action>
      <ereg regexp="Signal=#" search_in="body" check_it="true" assign_to="second"/>
    </action>
  </recv>
  <send><![CDATA[
SIP/2.0 200 OK
[last_Via:]
[last_From:]
[last_To:]
[last_Call-ID:]
[last_CSeq:]
Content-Length: 0

]]></send>
  <pause milliseconds="1000"/>
  <send retrans="500"><![CDATA[
BYE sip:agent@[remote_ip]:[remote_port] SIP/2.0
Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]SIPpTag00[call_number]
To: agent <sip:agent@[remote_ip]:[remote_port]>[peer_tag_param]
Call-ID: [call_id]
CSeq: 4 BYE
Max-Forwards: 70
Content-Length: 0

]]></send>
  <recv response="200"/>
  <Reference variables="first,second"/>
</scenario>
`;

describe("the agent's keys on a SIP call with no telephone-event", () => {
  it("go one INFO per key (application/dtmf-relay), in order", async () => {
    const file = join(dir, "dtmf-info.xml");
    writeFileSync(file, INFO_XML);
    const before = new Set(taken);
    const r = await runSipp({
      scenario: { file },
      target: `127.0.0.1:${bridge.sip!.udpPort}`,
      args: ["-m", "1"],
      timeoutS: 20,
    });
    expectAllCalls(r);
    expect(pressed(latestCall(before))).toBe(true);
  });
});
