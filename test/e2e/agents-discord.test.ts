// Agents in a Discord voice channel against the fake Discord: the guild routes the conversation
// to its agent (its greeting with the webhook's variable, in its voice); when the call-start
// webhook rejects, the bot joins and stays silent.
import { rmSync } from "node:fs";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bridge, startBridge } from "../../app/bridge/start.ts";
import { type FakeDiscord, startFakeDiscord } from "../fake-discord/index.ts";
import { type AgentsFixture, agentsFixture, GUILD, until } from "../helpers/agents-fixture.ts";

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
    fake.interaction("leave", { userId: ALICE.userId });
    await until(() => bridge.transcripts.get(conversation(1))?.endReason, "the conversation to end");
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
