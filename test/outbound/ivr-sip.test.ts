// An outbound agent with an `ivr` goal calls a phone menu (a baresip callee behind Kamailio as the
// trunk, playing a menu that ends in silence and repeats): the bridge's detector calls it a machine
// with no beep, the agent takes it as a menu — no greeting, it listens — and presses a key with
// send_dtmf when the menu speaks again; the callee reports the RFC 4733 digit it decoded.
// The scripted chat presses 1 at whatever the menu says: the recognizer's words are not relied on.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { type Bridge, startBridge } from "../../app/bridge/start.ts";
import { concatPcm } from "../../codecs/pcm.ts";
import { encodeWav } from "../../codecs/wav.ts";
import { loadConfig } from "../../src/config/config.ts";
import { Baresip } from "../helpers/baresip.ts";
import { freePort } from "../helpers/free-port.ts";
import { silence, speak } from "../helpers/speech.ts";
import { until } from "../helpers/until.ts";
import { loopbackSipEnv } from "./bridge-env.ts";
import { KamailioTrunk } from "./kamailio-trunk.ts";

const TOKEN = "ivr-test-token-0123456789";
const RATE = 8000;

let dir: string;
let bridge: Bridge;
let trunk: KamailioTrunk;
let menu: Baresip;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "ivr-"));
  const options = speak("For prescription refills, press one. For store hours, press two.", { rate: RATE });
  const wav = join(dir, "menu.wav");
  // The menu, silence (no beep: the detector's cue after 2 s), the menu again, then silence.
  writeFileSync(
    wav,
    encodeWav(
      concatPcm([silence(300, RATE), options, silence(3500, RATE), options, silence(15_000, RATE)]),
      RATE,
    ),
  );
  menu = await Baresip.start({ codec: "pcmu", wav, user: "menu", accountParams: ";answermode=auto" });
  const trunkPort = await freePort();
  trunk = await KamailioTrunk.start({
    dir,
    port: trunkPort,
    user: "bridge",
    password: "trunk-secret",
    callees: { "1005": { user: "menu", port: menu.sipPort } },
  });
  const scripted = join(dir, "scripted.yaml");
  writeFileSync(
    scripted,
    stringify({
      name: "menu presser",
      greeting: "Hello.",
      fallback: "Okay.",
      rules: [
        {
          intent: "press",
          when: ["."],
          tool: { name: "send_dtmf", arguments: { digits: "1" } },
          after_tool: "",
        },
      ],
    }),
  );
  const env = {
    ...loopbackSipEnv({ token: TOKEN, rtpPorts: "33100-33199", dir }),
    SIP_OUTBOUND_PROXY: `sip:127.0.0.1:${trunkPort}`,
    SIP_OUTBOUND_USER: "bridge",
    SIP_OUTBOUND_PASSWORD: "trunk-secret",
    SIP_OUTBOUND_FROM: "+15550100",
    SVC_SCRIPTED_AGENT: scripted,
    SVC_SCRIPTED_PACE_MS: "0",
  };
  const tree = {
    agent: {
      greeting: "Hello, this is the pharmacy assistant.",
      ivr: { goal: "reach the prescription refill line" },
    },
  };
  bridge = await startBridge(
    loadConfig({ env, given: { tree, name: "ivr test" } }),
    pino({ level: process.env.E2E_LOG ?? "silent" }),
  );
}, 90_000);

afterAll(async () => {
  await bridge?.close(0);
  await Promise.all([menu?.stop(), trunk?.stop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("an outbound agent reaching a phone menu", () => {
  it("takes a machine with no beep for a menu, listens, and presses a key toward its goal", async () => {
    const res = await fetch(`${bridge.url}/calls`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ to: "1005", via: "sip", machineDetection: "message" }),
    });
    expect(res.status).toBe(202);
    const { callId } = (await res.json()) as { callId: string };
    const digit = await until(
      () => menu.events.find((e) => e.type === "CALL_DTMF_START")?.param,
      "the menu to hear a key",
      25_000,
    );
    expect(digit).toBe("1");
    // Noted once the key is out (its gap after it included).
    const record = await until(() => {
      const r = bridge.transcripts.get(callId);
      return r?.events.some((e) => e.type === "note" && e.text === "agent pressed 1") ? r : undefined;
    }, "the key noted in the record");
    expect(record.amd).toMatchObject({ result: "machine", by: "bridge" });
    expect(record.amd?.beepEndedAtMs).toBeUndefined();
    const notes = record.events.flatMap((e) => (e.type === "note" ? [e.text] : []));
    expect(notes.some((n) => n.startsWith("phone menu answered"))).toBe(true);
    expect(notes).toContain("agent pressed 1");
    // No greeting and no voicemail message: the agent's first turn is the key it pressed.
    const first = record.turns.find((t) => t.role === "assistant");
    expect(first).toMatchObject({ tools: ["send_dtmf"] });
  }, 60_000);
});
