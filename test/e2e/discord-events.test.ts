// The connection events real Discord servers send, each through the real bridge (embedded local service)
// and the fake Discord, one after the other in one conversation: gateway Reconnect (op 7) and Invalid
// Session (op 9, not resumable), a voice gateway close it resumes from (1012) and the closes it must
// rejoin after (4006, 4009), a member leaving (DAVE remove and commit), a DAVE downgrade to
// transport-only and the upgrade back, and the voice server moving (a new VOICE_SERVER_UPDATE). After
// each, the conversation is the same one, with the same members, and a member who speaks is answered
// and hears the answer; in a DAVE call no media frame ever arrives unencrypted.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bridge } from "../../app/bridge/start.ts";
import { concatPcm } from "../../codecs/pcm.ts";
import type { CallRecord } from "../../src/records/call-record.ts";
import { type FakeDiscord, type SimulatedMember, startFakeDiscord } from "../fake-discord/index.ts";
import { startDiscordBridge } from "../helpers/discord-bridge.ts";
import { silence, speak } from "../helpers/speech.ts";
import { until } from "../helpers/until.ts";

const TOKEN = "MTAxMjM0.events.bot-token";
const ALICE = { userId: "420000000000000001", name: "Alice" };
const BOB = { userId: "420000000000000002", name: "Bob" };
let dir: string;
let fake: FakeDiscord;
let bridge: Bridge;
let alice: SimulatedMember;
let bob: SimulatedMember;
const lines: string[] = [];

const callId = () => `discord-${fake.guildId}-${fake.voiceChannelId}-1`;
const record = (): CallRecord | undefined => bridge.transcripts.get(callId());
const quiet = (m: SimulatedMember) => performance.now() - (m.agentSpeechSpans().at(-1)?.end ?? 0) > 800;
const voiceIdentifies = () => fake.voice.records.filter((r) => r.dir === "in" && r.op === 0).length;
const logged = (text: string) => lines.some((l) => l.includes(text));

/** The member asks something and hears an answer; the conversation is still the first one. */
async function answered(m: SimulatedMember, text = "what are your opening hours"): Promise<void> {
  await until(() => quiet(m), "the agent to be quiet", 30_000);
  const spans = m.agentSpeechSpans().length;
  const before = m.hearingStats.packets;
  await m.say({ pcm: concatPcm([speak(text, { rate: 48000 }), silence(1200, 48000)]), rate: 48000 });
  await until(() => m.agentSpeechSpans().length > spans, `an answer ${m.name} hears`, 40_000);
  expect(m.hearingStats.packets).toBeGreaterThan(before);
  expect(record()?.endReason).toBeUndefined();
  expect(bridge.transcripts.get(callId().replace(/-1$/, "-2"))).toBeUndefined();
  expect(fake.voice.clearMediaFrames).toBe(0);
  expect(m.hearingStats.clearDropped).toBe(0);
}

/** After the voice connection was rebuilt: the bot identified again and its members are in its DAVE group. */
async function rejoined(identifiesBefore: number): Promise<void> {
  await until(() => voiceIdentifies() > identifiesBefore, "the bot's voice identify");
  await until(() => fake.voice.connected, "the call to run");
  await until(() => alice.privacyCode !== "" && bob.privacyCode !== "", "the members back in the DAVE group");
  await fake.voice.daveSettled();
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-e2e-discord-events-"));
  fake = await startFakeDiscord({ token: TOKEN, members: [ALICE, BOB], daveDelayMs: 300 });
  fake.trustInThisProcess();
  bridge = await startDiscordBridge({ fake, token: TOKEN, dataDir: dir, greeting: "Hello everyone.", lines });
  fake.memberJoinsVoice(ALICE.userId);
  fake.memberJoinsVoice(BOB.userId);
  fake.interaction("join", { userId: ALICE.userId });
  await Promise.all([fake.daveJoined(ALICE.userId), fake.daveJoined(BOB.userId)]);
  alice = fake.member(ALICE.userId);
  bob = fake.member(BOB.userId);
  await until(() => alice.agentSpeechSpans().length > 0 && quiet(alice), "the greeting", 30_000);
}, 120_000);

afterAll(async () => {
  if (process.env.E2E_LOG) for (const l of lines) process.stderr.write(l);
  await bridge?.close(0);
  await fake?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the events real Discord servers send, in one conversation", () => {
  it("gateway Reconnect (op 7): the client resumes, the call goes on", async () => {
    const resumes = fake.gateway.records.filter((r) => r.dir === "in" && r.op === 6).length;
    fake.gateway.reconnect();
    await until(
      () => fake.gateway.records.filter((r) => r.dir === "in" && r.op === 6).length > resumes,
      "a gateway resume",
    );
    await until(() => fake.gateway.ready, "the gateway ready");
    await answered(alice);
  }, 90_000);

  it("gateway Invalid Session (op 9, not resumable): a new session, the call goes on", async () => {
    const identifies = fake.gateway.identifies.length;
    fake.gateway.invalidSession(false);
    await until(() => fake.gateway.identifies.length > identifies, "a new identify", 20_000);
    await until(() => fake.gateway.ready, "the gateway ready");
    await answered(bob, "where is the shop");
  }, 90_000);

  it("voice gateway closed with 1012 (restart): the bot resumes (op 7) without a new DAVE group", async () => {
    const identifies = voiceIdentifies();
    const resumes = fake.voice.records.filter((r) => r.dir === "in" && r.op === 7).length;
    fake.voice.closeWith(1012, "Service restart");
    await until(
      () => fake.voice.records.filter((r) => r.dir === "in" && r.op === 7).length > resumes,
      "a voice resume",
    );
    await answered(alice);
    expect(voiceIdentifies()).toBe(identifies);
  }, 90_000);

  for (const code of [4006, 4009]) {
    it(`voice gateway closed with ${code}: the bot rejoins, a new DAVE group, the same conversation`, async () => {
      const identifies = voiceIdentifies();
      fake.voice.closeWith(code);
      await rejoined(identifies);
      await answered(alice);
      await answered(bob, "and on sunday");
    }, 120_000);
  }

  it("the voice server moves (a new VOICE_SERVER_UPDATE): the bot reconnects, the call goes on", async () => {
    const identifies = voiceIdentifies();
    fake.moveVoiceServer();
    await rejoined(identifies);
    await answered(bob, "are you still there");
  }, 120_000);

  it("DAVE downgrade to transport-only and upgrade back: clear only while the call has no DAVE", async () => {
    await until(() => quiet(alice), "the agent to be quiet", 30_000);
    await fake.voice.downgradeDave();
    expect(fake.voice.daveProtocolVersion).toBe(0);
    const decrypted = alice.hearingStats.daveDecrypted;
    await answered(alice, "can you hear me now");
    expect(alice.hearingStats.daveDecrypted).toBe(decrypted); // heard in clear, as the call now is
    await until(() => logged("the call runs without DAVE"), "the log to say so");
    await until(() => quiet(alice), "the agent to be quiet", 30_000);
    await fake.voice.upgradeDave();
    expect(fake.voice.daveProtocolVersion).toBe(1);
    const again = alice.hearingStats.daveDecrypted;
    await answered(alice, "and now");
    expect(alice.hearingStats.daveDecrypted).toBeGreaterThan(again);
  }, 150_000);

  it("a member leaves (DAVE remove and commit): the other is still heard and answered", async () => {
    const failures = alice.hearingStats.daveFailures;
    fake.memberLeavesVoice(BOB.userId);
    await fake.voice.daveSettled();
    await answered(alice, "thank you");
    expect(alice.hearingStats.daveFailures).toBe(failures);
    expect(lines.some((l) => l.includes('"member":"Bob"') && l.includes("member left"))).toBe(true);
  }, 90_000);
});
