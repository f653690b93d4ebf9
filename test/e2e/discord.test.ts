// The Discord bot end to end: the real bridge (embedded local service) logs in to the fake Discord
// (REST, gateway v10, voice gateway v8 over TLS, UDP with transport encryption and a real DAVE
// session), joins on /join and talks with simulated members, who are DAVE group members speaking
// espeak-ng speech and recording what they hear. Words: none are checked (the embedded recognizer
// gets most wrong; the scripted agent answers whatever it hears).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { type Bridge, startBridge } from "../../src/main.ts";
import type { CallRecord } from "../../src/session/transcript.ts";
import { type FakeDiscord, type SimMember, startFakeDiscord } from "../fake-discord/index.ts";
import { speak } from "../helpers/speech.ts";

const TOKEN = "MTAxMjM0.fake.bot-token";
const GREETING = "Hello everyone, I am Ava. How can I help?";
let dir: string;
let fake: FakeDiscord;
let bridge: Bridge;
let alice: SimMember;
let bob: SimMember;

async function until<T>(what: string, get: () => T | undefined | false, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = get();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const say = (m: SimMember, text: string) => m.say(speak(text, { rate: 48000 }));
const record = (): CallRecord | undefined =>
  bridge.transcripts.get(`discord-${fake.guild.id}-${fake.voiceChannel.id}-1`);
/** The agent is quiet for this member: nothing heard for 600 ms. */
const quiet = (m: SimMember) => (m.heard.at(-1)?.at ?? 0) < performance.now() - 600;
const assistantTurns = () => record()?.turns.filter((t) => t.role === "assistant") ?? [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-e2e-discord-"));
  fake = await startFakeDiscord({ token: TOKEN });
  const config = loadConfig({
    env: {
      HOST: "127.0.0.1",
      PORT: "0",
      SIP_PORT: "off",
      SVC_LOCAL_DATA_DIR: join(dir, "data"),
      AGENT_GREETING: GREETING,
      DISCORD_TOKEN: TOKEN,
      DISCORD_API_BASE: fake.apiBase,
    },
  });
  bridge = await startBridge(config, pino({ level: process.env.E2E_LOG ?? "silent" }));
  await until("the slash commands", () =>
    fake.gateway.restCalls.some((c) => c.method === "PUT" && c.path.endsWith("/commands")),
  );
}, 60_000);

afterAll(async () => {
  await bridge?.close(0);
  await fake?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the Discord voice bot", () => {
  it("registers /join and /leave, joins the invoking member's channel on /join and greets it under DAVE", async () => {
    const commands = fake.gateway.restCalls.find((c) => c.method === "PUT" && c.path.endsWith("/commands"));
    expect((commands!.body as { name: string }[]).map((c) => c.name).sort()).toEqual(["join", "leave"]);
    expect(fake.gateway.identifies[0]!.intents & (1 << 7)).toBeTruthy(); // GuildVoiceStates
    alice = fake.addMember("Alice");
    fake.gateway.interaction("join", fake.guild.id, { id: alice.userId, username: "Alice" });
    const conn = await until("the voice connection", () => fake.voice.connectionFor(fake.guild.id));
    await until("Alice in the DAVE group", () => conn.settled && alice.dave.ready);
    expect(conn.daveVersion).toBe(1);
    await until("the greeting", () => alice.heard.length >= 50);
    await until("the greeting to end", () => quiet(alice));
    expect(alice.undecryptable).toBe(0);
    expect(assistantTurns()[0]).toMatchObject({ heard: GREETING });
  });

  it("answers a member and tells the model who spoke", async () => {
    const heardBefore = alice.heard.length;
    await say(alice, "What time do you open on Saturday?");
    const answer = await until("an answer to Alice", () => {
      const turns = record()?.turns ?? [];
      const i = turns.findIndex((t) => t.role === "user" && t.speaker === "Alice");
      return i >= 0 && turns.slice(i + 1).find((t) => t.role === "assistant");
    });
    expect(answer.role === "assistant" && answer.metrics.voiceToVoiceMs).toBeGreaterThan(0);
    await until("Alice hearing it", () => alice.heard.length > heardBefore + 25);
    await until("the answer to end", () => quiet(alice));
  });

  it("takes a member who joins mid-conversation into the DAVE group without breaking audio for the others", async () => {
    bob = fake.addMember("Bob");
    const conn = fake.voice.connectionFor(fake.guild.id)!;
    await until("Bob in the DAVE group", () => conn.settled && bob.dave.ready);
    expect(bob.dave.voicePrivacyCode).toBe(alice.dave.voicePrivacyCode);
    const [a, b] = [alice.heard.length, bob.heard.length];
    await say(bob, "Where is your shop?");
    await until("an answer to Bob", () => {
      const turns = record()?.turns ?? [];
      const i = turns.findIndex((t) => t.role === "user" && t.speaker === "Bob");
      return i >= 0 && turns.slice(i + 1).some((t) => t.role === "assistant");
    });
    await until("both hearing it", () => alice.heard.length > a + 25 && bob.heard.length > b + 25);
    expect(alice.undecryptable + bob.undecryptable).toBe(0);
    await until("the answer to end", () => quiet(alice));
    const users = record()!.turns.filter((t) => t.role === "user");
    expect(users.map((t) => t.role === "user" && t.speaker)).toEqual(["Alice", "Bob"]);
  });

  it("goes on through one member's backchannel, and stops for another's real interruption", async () => {
    const before = assistantTurns().length;
    await say(alice, "Can you tell me about your bikes and your prices please?");
    await until("the agent answering", () => assistantTurns().length >= before && !quiet(alice));
    await new Promise((r) => setTimeout(r, 600));
    await say(bob, "Mm hmm.");
    await new Promise((r) => setTimeout(r, 1200));
    expect(record()!.events.some((e) => e.type === "barge-in" && e.outcome === "resumed")).toBe(true);
    // Now Bob talks over it for real: the agent falls silent while he is still speaking.
    const talking = say(bob, "Sorry, actually I wanted to ask something completely different about repairs.");
    await until("the agent to stop", () => quiet(bob), 10_000);
    const stoppedAt = performance.now();
    await talking;
    expect(stoppedAt).toBeLessThan(performance.now());
    await until("the interrupted turn on record", () =>
      assistantTurns().find((t) => t.role === "assistant" && t.interrupted),
    );
    const cut = assistantTurns().find((t) => t.role === "assistant" && t.interrupted)!;
    expect(cut.role === "assistant" && cut.heard.length).toBeLessThan(
      cut.role === "assistant" ? cut.generated.length : 0,
    );
    await until(
      "the answer to Bob's interruption",
      () => quiet(alice) && record()!.turns.at(-1)?.role === "assistant",
      20_000,
    );
  });

  it("recovers from a voice server crash (4015) and keeps the conversation", async () => {
    const conn = fake.voice.connectionFor(fake.guild.id)!;
    conn.close(4015);
    await until("the voice connection back", () => fake.voice.connectionFor(fake.guild.id)?.ready);
    const heard = alice.heard.length;
    await say(alice, "Are you still there?");
    await until("an answer after the reconnect", () => alice.heard.length > heard + 25, 30_000);
    expect(record()?.endReason).toBeUndefined();
  });

  it("lets a member leave, and leaves the channel on /leave", async () => {
    fake.removeMember(bob);
    await new Promise((r) => setTimeout(r, 500));
    fake.gateway.interaction("leave", fake.guild.id, { id: alice.userId, username: "Alice" });
    const ended = await until("the conversation to end", () => record()?.endReason);
    expect(ended).toMatch(/leave/i);
    expect(fake.guild.voice.has(fake.gateway.bot.id)).toBe(false);
  });
});
