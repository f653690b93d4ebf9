// Agents in a Discord voice channel against the fake Discord: the guild routes the conversation
// to its agent (its greeting with the webhook's variable, in its voice); when the call-start
// webhook rejects, the bot joins and stays silent. Support hands the first conversation to accounts
// when asked for it by voice (handoff-fixture.ts), nothing of the conversation carried.
import { rmSync } from "node:fs";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bridge, startBridge } from "../../app/bridge/start.ts";
import { type FakeDiscord, startFakeDiscord } from "../fake-discord/index.ts";
import { type AgentsFixture, agentsFixture, GUILD, until } from "../helpers/agents-fixture.ts";
import { addHandoff, expectHandedOff, expectVoicesChanged } from "../helpers/handoff-fixture.ts";
import { speak } from "../helpers/speech.ts";

const TOKEN = "MTAxMjM0.agents.bot-token";
const ALICE = { userId: "400000000000000011", name: "Alice" };
let f: AgentsFixture;
let fake: FakeDiscord;
let bridge: Bridge;
/** The bridge's log lines. */
const logged: string[] = [];

const routesFor = (guildId: string, webhookPath: string) =>
  (f.tree.routes as Array<Record<string, unknown>>).map((r) =>
    r.guild === GUILD
      ? {
          ...r,
          guild: guildId,
          agentWebhook: { ...(r.agentWebhook as object), url: `${f.server.url}${webhookPath}` },
        }
      : r,
  );

beforeAll(async () => {
  fake = await startFakeDiscord({ token: TOKEN, members: [ALICE] });
  fake.trustInThisProcess();
  f = await agentsFixture({ discord: { token: TOKEN, apiBase: fake.restApi } });
  addHandoff(f, "none");
  f.write({ ...f.tree, routes: routesFor(fake.guildId, "/hook") });
  const sink = {
    write: (line: string) => {
      logged.push(line);
      if (process.env.E2E_LOG) process.stdout.write(line);
    },
  };
  bridge = await startBridge(f.load(), pino({ level: process.env.E2E_LOG ?? "info" }, sink), {
    readConfig: () => f.load(),
  });
  fake.memberJoinsVoice(ALICE.userId);
  await fake.waitForRest((r) => r.method === "PUT" && r.path.endsWith("/commands"));
}, 120_000);
afterAll(async () => {
  await bridge?.close(0);
  await fake?.close();
  await f?.server.close();
  if (f) rmSync(f.dir, { recursive: true, force: true });
});

const conversation = (n: number) => `discord-${fake.guildId}-${fake.voiceChannelId}-${n}`;

describe("agents in a Discord voice channel", () => {
  it("the guild's route picks the agent, with the webhook's variables", async () => {
    fake.interaction("join", { userId: ALICE.userId });
    await fake.daveJoined(ALICE.userId);
    const greeting = await until(() => {
      const t = bridge.transcripts.get(conversation(1))?.turns.find((x) => x.role === "assistant");
      return t?.role === "assistant" && t.generated;
    }, "the greeting");
    expect(greeting).toBe("Support line for gold customers.");
    expect(bridge.transcripts.get(conversation(1))?.agent).toBe("support");
    expect(
      fake
        .member(ALICE.userId)
        .heardFrames()
        .some((fr) => !fr.silent),
    ).toBe(true);
    const hook = f.server.to("/hook").at(-1)!;
    expect(JSON.parse(hook.body.toString())).toMatchObject({
      transport: "discord",
      params: { guildId: fake.guildId, channelId: fake.voiceChannelId },
    });
  }, 60_000);

  it("the same conversation: support hands it to accounts when asked, in that agent's voice, no history carried", async () => {
    const alice = fake.member(ALICE.userId);
    const record = () => bridge.transcripts.get(conversation(1));
    // Discord has no keypad: the handoff needs the words recognized by the weak embedded recognizer;
    // "accounts department" is (checked on espeak-ng's voice: "billing" is not, nor "sales").
    await alice.say({ pcm: speak("Accounts department, please.", { rate: 48000 }), rate: 48000 });
    await until(
      () => record()?.turns.some((t) => t.role === "assistant" && t.agent === "accounts"),
      "accounts",
    );
    fake.interaction("leave", { userId: ALICE.userId });
    await until(() => record()?.endReason, "the conversation to end");
    expect(record()?.turns.filter((t) => t.role === "user")).toEqual([
      expect.objectContaining({ text: expect.stringMatching(/\b(accounts|department)\b/), speaker: "Alice" }),
    ]);
    expectHandedOff(record()!, "Support line for gold customers.", "none");
    expectVoicesChanged(alice.heard(), 48_000);
  }, 60_000);

  it("a rejected conversation: the bot is there and says nothing", async () => {
    f.write({ ...f.tree, routes: routesFor(fake.guildId, "/reject") });
    expect(bridge.reload()).toMatchObject({ ok: true });
    const joinedAt = performance.now();
    fake.interaction("join", { userId: ALICE.userId });
    await until(() => f.server.to("/reject").length > 0, "the webhook to be asked");
    // The rejection taken: no session will start for this conversation, so no greeting either.
    await until(() => logged.some((l) => l.includes("call rejected at its start")), "the rejection");
    const voiced = fake
      .member(ALICE.userId)
      .heardFrames()
      .filter((fr) => !fr.silent && fr.at > joinedAt);
    expect(voiced).toEqual([]);
    expect(bridge.transcripts.get(conversation(2))).toBeUndefined();
  }, 60_000);
});
