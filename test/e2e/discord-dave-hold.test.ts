// Not a word before end-to-end encryption is up: members that answer DAVE as real clients do, some
// hundreds of milliseconds after the bot's key package, and that drop unencrypted media. The real
// bridge (embedded local service) joins, and its greeting must start only once the DAVE group holds
// its keys: the fake counts every media frame the bot sends, none may arrive in clear, and each
// member decrypts every one of them (the greeting heard whole, from its first frame).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bridge } from "../../app/bridge/start.ts";
import type { CallRecord } from "../../src/records/call-record.ts";
import { type FakeDiscord, startFakeDiscord } from "../fake-discord/index.ts";
import { startDiscordBridge } from "../helpers/discord-bridge.ts";
import { until } from "../helpers/until.ts";

const TOKEN = "MTAxMjM0.hold.bot-token";
const ALICE = { userId: "410000000000000001", name: "Alice" };
const BOB = { userId: "410000000000000002", name: "Bob" };
/** Well inside the protocol's ~2 s transition window, and far more than the bot's own steps take. */
const DAVE_DELAY_MS = 800;
let dir: string;
let fake: FakeDiscord;
let bridge: Bridge;
const lines: string[] = [];

const record = (): CallRecord | undefined =>
  bridge.transcripts.get(`discord-${fake.guildId}-${fake.voiceChannelId}-1`);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-e2e-discord-hold-"));
  fake = await startFakeDiscord({ token: TOKEN, members: [ALICE, BOB], daveDelayMs: DAVE_DELAY_MS });
  fake.trustInThisProcess();
  bridge = await startDiscordBridge({
    fake,
    token: TOKEN,
    dataDir: dir,
    greeting: "Hello everyone, welcome to the channel.",
    lines,
  });
  fake.memberJoinsVoice(ALICE.userId);
  fake.memberJoinsVoice(BOB.userId);
}, 120_000);

afterAll(async () => {
  await bridge?.close(0);
  await fake?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the bot speaks only once DAVE is up", () => {
  it("holds the greeting until the group's keys arrive; every member decrypts all of it", async () => {
    fake.interaction("join", { userId: ALICE.userId });
    await Promise.all([fake.daveJoined(ALICE.userId), fake.daveJoined(BOB.userId)]);
    const alice = fake.member(ALICE.userId);
    const bob = fake.member(BOB.userId);
    const greeting = await until(
      () =>
        record()?.turns.find((t) => t.role === "assistant" && t.heard.length > 0 && t.heard === t.generated),
      "the greeting on record",
    );
    await until(
      () => alice.hearingStats.packets >= fake.voice.daveMediaFrames + 5,
      "the greeting to be heard out",
    );
    expect(greeting.role === "assistant" && greeting.interrupted).toBe(false);
    expect(fake.voice.clearMediaFrames).toBe(0);
    expect(fake.voice.daveMediaFrames).toBeGreaterThan(50); // more than a second of greeting
    for (const m of [alice, bob]) {
      const s = m.hearingStats;
      expect(s.clearDropped).toBe(0);
      expect(s.daveFailures).toBe(0);
      expect(s.daveDecrypted).toBe(fake.voice.daveMediaFrames);
    }
    const started = lines.map((l) => JSON.parse(l)).find((l) => l.msg?.includes("conversation starts"));
    expect(started).toMatchObject({ dave: true, e2ee: "DAVE v1 on" });
    expect(started.secureAfterMs).toBeGreaterThanOrEqual(DAVE_DELAY_MS);
    // No epoch since: the bot logged the code its members see.
    expect(started.privacyCode).toBe(alice.privacyCode);
  }, 60_000);
});

describe("DAVE that never comes up", () => {
  it("ends the conversation with one clear line and sends nothing, rather than speak in clear", async () => {
    const mute = await startFakeDiscord({ token: TOKEN, members: [ALICE], daveDelayMs: 60_000 });
    mute.trustInThisProcess();
    const own: string[] = [];
    let other: Bridge | undefined;
    try {
      other = await startDiscordBridge({
        fake: mute,
        token: TOKEN,
        dataDir: join(dir, "mute"),
        greeting: "Hello.",
        lines: own,
      });
      mute.memberJoinsVoice(ALICE.userId);
      mute.interaction("join", { userId: ALICE.userId });
      const reply = await mute.waitForRest(
        (r) => r.method === "PATCH" && JSON.stringify(r.body).includes("could not join"),
      );
      expect(JSON.stringify(reply.body)).toMatch(/end-to-end encryption \(DAVE\) did not come up/);
      const line = own.find((l) => l.includes("DAVE did not come up"));
      expect(line).toMatch(/rather than speak unencrypted/);
      expect(mute.voice.clearMediaFrames + mute.voice.daveMediaFrames).toBe(0);
      expect(own.some((l) => l.includes("conversation starts"))).toBe(false);
    } finally {
      await other?.close(0);
      await mute.close();
    }
  }, 60_000);
});
