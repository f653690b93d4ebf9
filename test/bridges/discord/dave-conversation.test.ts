// The real `voice-bridge start` process against the fake Discord (test/fake-discord) with DAVE on:
// /join, the greeting heard through each member's own DAVE session, a member's espeak-ng utterance
// answered, a second member joining mid-conversation (a new DAVE epoch) and being answered too
// while the first keeps hearing the agent, a 4015 voice server crash resumed, /leave; joined again,
// a 4014 (disconnected from the channel) that never reconnects ends the conversation cleanly.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { concatPcm } from "../../../codecs/pcm.ts";
import { type FakeDiscord, type RestRecord, startFakeDiscord } from "../../fake-discord/index.ts";
import { silence, speak } from "../../helpers/speech.ts";
import { until } from "../../helpers/until.ts";

const ROOT = join(import.meta.dirname, "../../..");
const TOKEN = "MTIz.dave.token";
const ALICE = "300000000000000001";
const BOB = "300000000000000002";
let dir: string;
let fake: FakeDiscord;
let bridge: ChildProcess;
const log: string[] = [];

function rms(pcm: Int16Array): number {
  let sum = 0;
  for (const s of pcm) sum += s * s;
  return Math.sqrt(sum / Math.max(1, pcm.length));
}

/** An utterance at 48 kHz with the second of silence a client's voice activity sends after it. */
function utterance(text: string): { pcm: Int16Array; rate: number } {
  return { pcm: concatPcm([speak(text, { rate: 48000 }), silence(1500, 48000)]), rate: 48000 };
}

const replyText = (r: RestRecord): string => {
  const b = r.body as { content?: string; data?: { content?: string } };
  return b.content ?? b.data?.content ?? "";
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-discord-dave-"));
  fake = await startFakeDiscord({
    token: TOKEN,
    members: [
      { userId: ALICE, name: "Alice" },
      { userId: BOB, name: "Bob" },
    ],
  });
  bridge = spawn(join(ROOT, "bin/voice-bridge"), ["start"], {
    env: {
      ...process.env,
      NODE_EXTRA_CA_CERTS: fake.caCertPath,
      HOST: "127.0.0.1",
      PORT: "0",
      SIP_PORT: "off",
      LOG_FORMAT: "json",
      LOG_LEVEL: "info",
      SVC_LOCAL_DATA_DIR: join(dir, "data"),
      DISCORD_TOKEN: TOKEN,
      DISCORD_API_BASE: fake.restApi,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  for (const s of [bridge.stdout!, bridge.stderr!])
    s.on("data", (b: Buffer) => {
      for (const l of b.toString().split("\n")) if (l) log.push(l);
      if (process.env.E2E_LOG) process.stderr.write(b);
    });
  await fake.waitForRest((r) => r.method === "PUT" && r.path.includes("/commands"));
}, 180_000);

afterAll(async () => {
  if (bridge && bridge.exitCode === null) {
    const exited = new Promise((r) => bridge.once("exit", r));
    bridge.kill("SIGINT");
    await exited;
  }
  await fake?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("a conversation in a Discord voice channel with DAVE", () => {
  it("/join: the bot joins Alice's channel and she hears the greeting", { timeout: 120_000 }, async () => {
    fake.memberJoinsVoice(ALICE);
    fake.interaction("join", { userId: ALICE });
    const edit = await fake.waitForRest((r) => r.method === "PATCH" && replyText(r).length > 0);
    expect(replyText(edit)).toMatch(/Joined/);
    await fake.daveJoined(ALICE);
    const alice = fake.member(ALICE);
    await until(() => alice.heard().length >= 48000, "a second of greeting", 90_000);
    expect(rms(alice.heard())).toBeGreaterThan(300);
  });

  it("Alice speaks and gets a reply", { timeout: 120_000 }, async () => {
    const alice = fake.member(ALICE);
    await until(
      () => {
        const spans = alice.agentSpeechSpans();
        return spans.length > 0 && performance.now() - spans.at(-1)!.end > 1000;
      },
      "the greeting to end",
      90_000,
    );
    const spansBefore = alice.agentSpeechSpans().length;
    await alice.say(utterance("what are your opening hours"));
    await until(() => alice.agentSpeechSpans().length > spansBefore, "a reply", 90_000);
    expect(log.some((l) => l.includes("listening to member") && l.includes("Alice"))).toBe(true);
  });

  it("Bob joins mid-conversation (a new DAVE epoch), is answered, and Alice hears it too", {
    timeout: 150_000,
  }, async () => {
    const alice = fake.member(ALICE);
    const bob = fake.member(BOB);
    await until(
      () => performance.now() - (alice.agentSpeechSpans().at(-1)?.end ?? 0) > 1000,
      "the reply to end",
      90_000,
    );
    fake.memberJoinsVoice(BOB);
    await fake.daveJoined(BOB);
    const aliceSpans = alice.agentSpeechSpans().length;
    await bob.say(utterance("where are you located"));
    await until(() => bob.agentSpeechSpans().length > 0, "a reply Bob hears", 90_000);
    await until(() => alice.agentSpeechSpans().length > aliceSpans, "Alice hearing it too", 30_000);
    expect(log.some((l) => l.includes("listening to member") && l.includes("Bob"))).toBe(true);
  });

  it("the voice server crashes (4015): the bot resumes and the conversation goes on", {
    timeout: 120_000,
  }, async () => {
    const alice = fake.member(ALICE);
    await until(
      () => performance.now() - (alice.agentSpeechSpans().at(-1)?.end ?? 0) > 1000,
      "quiet",
      90_000,
    );
    fake.voice.closeWith(4015);
    await fake.voice.daveSettled();
    const spans = alice.agentSpeechSpans().length;
    await alice.say(utterance("thanks that's all"));
    await until(() => alice.agentSpeechSpans().length > spans, "a reply after the resume", 90_000);
    expect(log.some((l) => l.includes("conversation ended"))).toBe(false);
  });

  it("/leave: the bot leaves and the conversation ends", { timeout: 60_000 }, async () => {
    const before = fake.rest.length;
    fake.interaction("leave", { userId: ALICE });
    const reply = await fake.waitForRest(
      (r) => fake.rest.indexOf(r) >= before && /Left|not in/.test(replyText(r)),
    );
    expect(replyText(reply)).toMatch(/Left/);
    await until(() => log.some((l) => l.includes("conversation ended")), "the end in the log", 90_000);
  });

  it("a 4014 that does not reconnect within 5 s ends the conversation cleanly", {
    timeout: 90_000,
  }, async () => {
    const ended = () => log.filter((l) => l.includes("conversation ended")).length;
    const endedBefore = ended();
    const before = fake.rest.length;
    fake.interaction("join", { userId: ALICE });
    const edit = await fake.waitForRest((r) => fake.rest.indexOf(r) >= before && r.method === "PATCH");
    expect(replyText(edit)).toMatch(/Joined/);
    await fake.daveJoined(ALICE);
    fake.voice.closeWith(4014);
    await until(() => ended() > endedBefore, "the conversation to end", 60_000);
    expect(log.some((l) => l.includes("voice connection lost (close 4014)"))).toBe(true);
    // The bridge goes on: the member can have the agent back.
    const again = fake.rest.length;
    fake.interaction("join", { userId: ALICE });
    const edit2 = await fake.waitForRest((r) => fake.rest.indexOf(r) >= again && r.method === "PATCH");
    expect(replyText(edit2)).toMatch(/Joined/);
  });
});
