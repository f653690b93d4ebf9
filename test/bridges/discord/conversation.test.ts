// A whole conversation in a voice channel: the real `voice-bridge start` process (embedded local
// service) against a v10 gateway and a v8 voice server on loopback (no DAVE: the fake voice server
// offers protocol version 0). /join → the bot joins and greets (Opus the test decodes); a member
// speaks an espeak-ng utterance and gets a reply; the voice socket drops with 4015 and the bot
// resumes; /leave → the bot leaves the channel; joined again, it leaves by itself when the last
// human does.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OpusCodec } from "../../../codecs/opus.ts";
import { speak } from "../../helpers/speech.ts";
import { makeSelfSignedCert, removeCert, type SelfSignedCert } from "../../helpers/tls-cert.ts";
import { until } from "../../helpers/until.ts";
import { CHANNEL_ID, MEMBER_ID, startTextGateway, type TextGateway } from "./text-gateway.ts";
import { startVoiceServer, type VoiceServer } from "./voice-server.ts";

const ROOT = join(import.meta.dirname, "../../..");
let dir: string;
let gateway: TextGateway;
let voice: VoiceServer;
let bridge: ChildProcess;
let tls: SelfSignedCert;
const log: string[] = [];

/** RMS of the decoded bot audio in `packets` (48 kHz stereo decode). */
function level(packets: Buffer[]): number {
  const codec = new OpusCodec(48000, 2);
  let sum = 0;
  let n = 0;
  for (const p of packets) {
    const pcm = codec.decode(p);
    for (const s of pcm) sum += s * s;
    n += pcm.length;
  }
  return Math.sqrt(sum / Math.max(1, n));
}

/** A member's utterance as a Discord client sends it: 48 kHz stereo Opus, 20 ms packets, then silence. */
function memberPackets(text: string): Uint8Array[] {
  const mono = speak(text, { rate: 48000 });
  const codec = new OpusCodec(48000, 2);
  const out: Uint8Array[] = [];
  const frames = Math.ceil(mono.length / 960) + 75; // 1.5 s of silence after the words
  for (let f = 0; f < frames; f++) {
    const st = new Int16Array(1920);
    for (let i = 0; i < 960; i++) {
      const v = mono[f * 960 + i] ?? 0;
      st[2 * i] = v;
      st[2 * i + 1] = v;
    }
    out.push(codec.encode(st).slice());
  }
  return out;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-discord-conv-"));
  tls = makeSelfSignedCert();
  voice = await startVoiceServer({ key: tls.key, cert: tls.cert });
  gateway = await startTextGateway({ botDenied: 0n, voiceEndpoint: voice.endpoint });
  bridge = spawn(join(ROOT, "bin/voice-bridge"), ["start"], {
    env: {
      ...process.env,
      NODE_EXTRA_CA_CERTS: tls.certPath,
      HOST: "127.0.0.1",
      PORT: "0",
      SIP_PORT: "off",
      LOG_FORMAT: "json",
      LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? "info",
      SVC_LOCAL_DATA_DIR: join(dir, "data"),
      DISCORD_TOKEN: "MTIz.test.token",
      DISCORD_API_BASE: gateway.apiBase,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  for (const s of [bridge.stdout!, bridge.stderr!])
    s.on("data", (b: Buffer) => {
      for (const l of b.toString().split("\n")) if (l) log.push(l);
      if (process.env.E2E_LOG) process.stderr.write(b);
    });
  await until(() => gateway.commands.size > 0, "the bot to register its commands", 120_000);
}, 180_000);

afterAll(async () => {
  if (bridge && bridge.exitCode === null) {
    const exited = new Promise((r) => bridge.once("exit", r));
    bridge.kill("SIGINT");
    await exited;
  }
  await gateway?.close();
  await voice?.close();
  rmSync(dir, { recursive: true, force: true });
  if (tls) removeCert(tls);
});

describe("a conversation in a Discord voice channel", () => {
  it("/join: the bot joins the member's channel and greets it in Opus", { timeout: 120_000 }, async () => {
    const [, edit] = await gateway.command("join", true);
    expect(edit!.body.content).toMatch(/Joined Lounge/);
    expect(gateway.voiceUpdates).toEqual([CHANNEL_ID]);
    // The greeting: at least a second and a half of audio (20 ms packets), decodable, not silence.
    await until(() => voice.received.length >= 75, "the greeting", 60_000);
    expect(level(voice.received.map((p) => p.opus))).toBeGreaterThan(300);
  });

  it("a member speaks and gets a reply", { timeout: 120_000 }, async () => {
    // Wait for the greeting to finish: no packet for a second.
    await until(
      () => {
        const last = voice.received.at(-1);
        return last !== undefined && performance.now() - last.at > 1000;
      },
      "the greeting to end",
      60_000,
    );
    const before = voice.received.length;
    await voice.speak(MEMBER_ID, memberPackets("what are your opening hours"));
    await until(() => voice.received.length - before >= 25, "a reply", 90_000);
    expect(level(voice.received.slice(before).map((p) => p.opus))).toBeGreaterThan(300);
    expect(log.some((l) => l.includes("listening to member") && l.includes("Alice"))).toBe(true);
  });

  it("the voice socket drops with 4015: the bot resumes and the conversation goes on", {
    timeout: 60_000,
  }, async () => {
    voice.dropSocket(4015);
    await until(() => voice.resumes >= 1, "a resume", 60_000);
    expect(gateway.voiceUpdates).toEqual([CHANNEL_ID]);
    expect(log.some((l) => l.includes("conversation ended"))).toBe(false);
  });

  it("/leave: the bot leaves the channel and the conversation ends", { timeout: 60_000 }, async () => {
    const [reply] = await gateway.command("leave", true);
    expect(reply!.body.data!.content).toMatch(/Left Lounge/);
    await until(() => gateway.voiceUpdates.at(-1) === null, "the bot to leave", 60_000);
    await until(() => log.some((l) => l.includes("conversation ended")), "the end in the log", 60_000);
  });

  it("leaves by itself when the last human leaves the channel", { timeout: 60_000 }, async () => {
    const [, edit] = await gateway.command("join", true);
    expect(edit!.body.content).toMatch(/Joined Lounge/);
    expect(gateway.voiceUpdates.at(-1)).toBe(CHANNEL_ID);
    // The member leaves once the greeting has begun (see the report: leaving before the session's
    // first TTS session is open left the local service unable to close).
    const heard = voice.received.length;
    await until(() => voice.received.length > heard, "the second greeting", 60_000);
    gateway.memberVoice(false);
    await until(() => gateway.voiceUpdates.at(-1) === null, "the bot to leave", 60_000);
    await until(
      () => log.some((l) => l.includes("everyone left the channel")),
      "the reason in the log",
      60_000,
    );
  });
});
