// Several people in one Discord voice channel, end to end under DAVE: the real bridge (embedded
// local service) against the fake Discord. Each member is heard on their own and named in the
// history; one member's backchannel does not stop the agent answering another, a real
// interruption does (and the record keeps what was heard); a member leaving does not disturb the
// others. Words are not checked: the embedded recognizer gets most wrong, and the scripted agent
// answers whatever it hears.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bridge } from "../../app/bridge/start.ts";
import type { CallRecord } from "../../src/records/call-record.ts";
import { type FakeDiscord, type SimulatedMember, startFakeDiscord } from "../fake-discord/index.ts";
import { startDiscordBridge } from "../helpers/discord-bridge.ts";
import { speak } from "../helpers/speech.ts";
import { until } from "../helpers/until.ts";

const TOKEN = "MTAxMjM0.group.bot-token";
const ALICE = { userId: "400000000000000001", name: "Alice" };
const BOB = { userId: "400000000000000002", name: "Bob" };
let dir: string;
let fake: FakeDiscord;
let bridge: Bridge;
let alice: SimulatedMember;
let bob: SimulatedMember;

const say = (m: SimulatedMember, text: string) => m.say({ pcm: speak(text, { rate: 48000 }), rate: 48000 });
const record = (): CallRecord | undefined =>
  bridge.transcripts.get(`discord-${fake.guildId}-${fake.voiceChannelId}-1`);
const voicedAt = (m: SimulatedMember) => m.heardFrames().findLast((f) => !f.silent)?.at ?? 0;
/** The agent is quiet for this member: nothing voiced heard for 600 ms. */
const quiet = (m: SimulatedMember) => voicedAt(m) < performance.now() - 600;
const assistantTurns = () => record()?.turns.filter((t) => t.role === "assistant") ?? [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-e2e-discord-group-"));
  fake = await startFakeDiscord({ token: TOKEN, members: [ALICE, BOB] });
  fake.trustInThisProcess();
  bridge = await startDiscordBridge({ fake, token: TOKEN, dataDir: dir, greeting: "Hello everyone." });
  fake.memberJoinsVoice(ALICE.userId);
  fake.memberJoinsVoice(BOB.userId);
  fake.interaction("join", { userId: ALICE.userId });
  await Promise.all([fake.daveJoined(ALICE.userId), fake.daveJoined(BOB.userId)]);
  alice = fake.member(ALICE.userId);
  bob = fake.member(BOB.userId);
  await until(() => voicedAt(alice) > 0 && quiet(alice), "the greeting");
}, 120_000);

afterAll(async () => {
  await bridge?.close(0);
  await fake?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a group conversation in a Discord voice channel", () => {
  it("answers each member and names them in the history", async () => {
    await say(alice, "What time do you open on Saturday?");
    await until(
      () => record()?.turns.at(-1)?.role === "assistant" && assistantTurns().length >= 2,
      "an answer to Alice",
    );
    await until(() => quiet(alice), "the answer to end");
    await say(bob, "And where is the shop?");
    await until(() => assistantTurns().length >= 3 && quiet(bob), "an answer to Bob");
    const users = record()!.turns.filter((t) => t.role === "user");
    expect(users.map((t) => t.role === "user" && t.speaker)).toEqual(["Alice", "Bob"]);
  }, 60_000);

  it("goes on through one member's backchannel, and stops for another's real interruption", async () => {
    const before = assistantTurns().length;
    await say(alice, "Can you tell me about your bikes and your prices please?");
    const voiced = () => bob.heardFrames().filter((f) => !f.silent).length;
    const voicedBefore = voiced();
    // Half a second into the answer (25 voiced frames of 20 ms), Bob says his backchannel.
    await until(() => voiced() - voicedBefore >= 25, "the agent answering", 20_000);
    await say(bob, "Mm hmm.");
    await until(
      () => record()!.events.some((e) => e.type === "barge-in" && e.outcome === "resumed"),
      "the backchannel let go",
    );
    // The agent goes on talking to Alice. Its voice comes back a moment after the record says
    // so: the pause that preceded it may already be 600 ms long when the record is written.
    await until(() => !quiet(alice), "the agent to go on talking to Alice", 5_000);
    // Now Bob talks over it for real: the agent falls silent while he is still speaking.
    let stillTalking = true;
    const talking = say(
      bob,
      "Sorry, actually I wanted to ask something completely different about repairs.",
    ).then(() => {
      stillTalking = false;
    });
    await until(() => quiet(alice), "the agent to stop", 15_000);
    expect(stillTalking).toBe(true);
    await talking;
    const cut = await until(
      () =>
        assistantTurns()
          .slice(before)
          .find((t) => t.role === "assistant" && t.interrupted),
      "the interrupted turn on record",
    );
    expect(cut.role === "assistant" && cut.heard.length).toBeLessThan(
      cut.role === "assistant" ? cut.generated.length : 0,
    );
    await until(
      () => record()!.turns.at(-1)?.role === "assistant" && quiet(alice),
      "an answer to Bob's interruption",
      20_000,
    );
  }, 60_000);

  it("keeps talking with those who stay when a member leaves", async () => {
    fake.memberLeavesVoice(BOB.userId);
    const turns = assistantTurns().length;
    await say(alice, "Are you still there?");
    await until(() => assistantTurns().length > turns && quiet(alice), "an answer after Bob left", 30_000);
    expect(record()?.endReason).toBeUndefined();
    expect(alice.hearingStats.daveFailures).toBe(0);
  }, 60_000);
});
