// The fake Discord checked against the real client libraries, no bot: @discordjs/voice (with a custom
// adapter standing in for the gateway) for voice, DAVE, playback and receive; discord.js for REST + gateway.

import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import {
  createAudioPlayer,
  createAudioResource,
  EndBehaviorType,
  entersState,
  joinVoiceChannel,
  StreamType,
  type VoiceConnection,
  VoiceConnectionStatus,
} from "@discordjs/voice";
import { Client, Events, GatewayIntentBits, type Interaction } from "discord.js";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { OpusCodec } from "../../codecs/opus.ts";
import { encodeWav } from "../../codecs/wav.ts";
import { type FakeDiscord, startFakeDiscord, XCHACHA_MODE } from "./index.ts";

const TOKEN = "fake-bot-token";
const ALICE = "200000000000000001";
const BOB = "200000000000000002";

let fake: FakeDiscord | undefined;
let connection: VoiceConnection | undefined;
let client: Client | undefined;

afterEach(async () => {
  connection?.destroy();
  connection = undefined;
  await client?.destroy();
  client = undefined;
  await fake?.close();
  fake = undefined;
});

function joinWithAdapter(f: FakeDiscord): VoiceConnection {
  const sessionId = "voice-session-1";
  return joinVoiceChannel({
    guildId: f.guildId,
    channelId: f.voiceChannelId,
    selfDeaf: false,
    adapterCreator: (methods) => ({
      sendPayload(payload) {
        const d = payload.d as { channel_id: string | null };
        queueMicrotask(() => {
          const grant = f.botVoiceStateUpdate(d.channel_id, sessionId);
          if (!grant) return;
          methods.onVoiceStateUpdate({
            session_id: sessionId,
            user_id: f.botUserId,
            channel_id: d.channel_id,
            guild_id: f.guildId,
            deaf: false,
            mute: false,
            self_deaf: false,
            self_mute: false,
            self_video: false,
            suppress: false,
            request_to_speak_timestamp: null,
          });
          methods.onVoiceServerUpdate({ token: grant.token, guild_id: f.guildId, endpoint: grant.endpoint });
        });
        return true;
      },
      destroy() {},
    }),
  });
}

/** `count` 20 ms Opus packets of a 440 Hz tone, 48 kHz stereo. */
function tonePackets(count: number): Buffer[] {
  const codec = new OpusCodec(48000, 2);
  const frame = new Int16Array(1920);
  for (let i = 0; i < 960; i++) {
    const v = Math.round(8000 * Math.sin((i * 2 * Math.PI * 440) / 48000));
    frame[2 * i] = v;
    frame[2 * i + 1] = v;
  }
  return Array.from({ length: count }, () => Buffer.from(codec.encode(frame)));
}

async function play(conn: VoiceConnection, packets: Buffer[]): Promise<void> {
  const player = createAudioPlayer();
  conn.subscribe(player);
  player.play(createAudioResource(Readable.from(packets), { inputType: StreamType.Opus }));
  await once(player, "idle");
  player.stop(true);
}

function botPrivacyCode(conn: VoiceConnection): string | null | undefined {
  const state = conn.state;
  if (state.status !== VoiceConnectionStatus.Ready) return undefined;
  const networking = state.networking.state;
  return "dave" in networking ? networking.dave?.voicePrivacyCode : undefined;
}

/** Opus packets the bot receives from `userId` until `AfterSilence`. */
async function received(conn: VoiceConnection, userId: string, speak: () => Promise<void>): Promise<number> {
  const stream = conn.receiver.subscribe(userId, {
    end: { behavior: EndBehaviorType.AfterSilence, duration: 300 },
  });
  let packets = 0;
  stream.on("data", () => packets++);
  const ended = once(stream, "end");
  await speak();
  await ended;
  return packets;
}

const speech = {
  pcm: Int16Array.from({ length: 16000 }, (_, i) => Math.round(6000 * Math.sin(i * 0.12))),
  rate: 16000,
};

describe("fake Discord voice with @discordjs/voice", () => {
  it("runs DAVE with a member: same privacy code, audio both ways, a second member joins and one leaves", async () => {
    fake = await startFakeDiscord({
      token: TOKEN,
      members: [
        { userId: ALICE, name: "alice" },
        { userId: BOB, name: "bob" },
      ],
    });
    fake.trustInThisProcess();
    fake.memberJoinsVoice(ALICE);
    connection = joinWithAdapter(fake);
    await entersState(connection, VoiceConnectionStatus.Ready, 20_000);
    const alice = fake.member(ALICE);
    await fake.daveJoined(ALICE);
    expect(fake.voice.daveProtocolVersion).toBe(1);
    expect(alice.privacyCode).toMatch(/^\d{30}$/);
    expect(botPrivacyCode(connection)).toBe(alice.privacyCode);

    await play(connection, tonePackets(50));
    expect(alice.hearingStats.daveFailures).toBe(0);
    expect(alice.hearingStats.daveDecrypted).toBe(50);
    expect(alice.agentSpeechSpans()).toHaveLength(1);

    expect(await received(connection, ALICE, () => alice.say(speech))).toBeGreaterThanOrEqual(50);

    // A second member: a new epoch, everyone's code changes together, audio still decrypts.
    const before = alice.privacyCode;
    fake.memberJoinsVoice(BOB);
    const bob = fake.member(BOB);
    await fake.daveJoined(BOB);
    expect(bob.privacyCode).toBe(alice.privacyCode);
    expect(alice.privacyCode).not.toBe(before);
    expect(botPrivacyCode(connection)).toBe(alice.privacyCode);
    alice.clearHeard();
    await play(connection, tonePackets(25));
    expect(bob.hearingStats.daveDecrypted).toBe(25);
    expect(alice.heardFrames().filter((f) => !f.silent).length).toBe(25);
    expect(await received(connection, BOB, () => bob.say(speech))).toBeGreaterThanOrEqual(50);

    // Bob leaves: removed from the group, Alice and the bot move on to a new epoch together.
    const withBob = alice.privacyCode;
    fake.memberLeavesVoice(BOB);
    await fake.voice.daveSettled();
    expect(alice.privacyCode).not.toBe(withBob);
    expect(botPrivacyCode(connection)).toBe(alice.privacyCode);
    expect(await received(connection, ALICE, () => alice.say(speech))).toBeGreaterThanOrEqual(50);
    expect(fake.voice.transportFailures).toBe(0);
  });

  it("a member joining while the bot speaks: the transition does not break the audio the others hear", async () => {
    fake = await startFakeDiscord({
      token: TOKEN,
      members: [
        { userId: ALICE, name: "alice" },
        { userId: BOB, name: "bob" },
      ],
    });
    fake.trustInThisProcess();
    fake.memberJoinsVoice(ALICE);
    connection = joinWithAdapter(fake);
    await entersState(connection, VoiceConnectionStatus.Ready, 20_000);
    const alice = fake.member(ALICE);
    const bob = fake.member(BOB);
    await fake.daveJoined(ALICE);
    const playing = play(connection, tonePackets(150));
    await fake.voice.waitFor(() => alice.hearingStats.daveDecrypted >= 10);
    fake.memberJoinsVoice(BOB);
    await fake.voice.daveSettled();
    await playing;
    expect(alice.hearingStats.daveFailures).toBe(0);
    expect(alice.heardFrames().filter((f) => !f.silent)).toHaveLength(150);
    expect(bob.privacyCode).toBe(alice.privacyCode);
    expect(botPrivacyCode(connection)).toBe(alice.privacyCode);
    // Bob hears the bot from the moment the bot encrypts for the new epoch.
    bob.clearHeard();
    await play(connection, tonePackets(10));
    expect(bob.heardFrames().filter((f) => !f.silent)).toHaveLength(10);
    expect(alice.hearingStats.daveFailures).toBe(0);
  });

  it("without DAVE, over XChaCha20-Poly1305: audio both ways in the clear end to end", async () => {
    fake = await startFakeDiscord({
      token: TOKEN,
      members: [{ userId: ALICE, name: "alice" }],
      dave: false,
      modes: [XCHACHA_MODE],
    });
    fake.trustInThisProcess();
    fake.memberJoinsVoice(ALICE);
    connection = joinWithAdapter(fake);
    await entersState(connection, VoiceConnectionStatus.Ready, 20_000);
    const alice = fake.member(ALICE);
    expect(fake.voice.daveProtocolVersion).toBe(0);
    expect(fake.voice.records.find((r) => r.dir === "in" && r.op === 1)?.d).toMatchObject({
      data: { mode: XCHACHA_MODE },
    });
    await fake.voice.waitFor(() => alice.connected);
    await play(connection, tonePackets(20));
    expect(alice.heardFrames().filter((f) => !f.silent)).toHaveLength(20);
    expect(alice.hearingStats.daveDecrypted).toBe(0);
    expect(await received(connection, ALICE, () => alice.say(speech))).toBeGreaterThanOrEqual(50);
    expect(fake.voice.transportFailures).toBe(0);
  });

  it("closes with the server's close codes: 4015 resumes, 4014 disconnects", async () => {
    fake = await startFakeDiscord({ token: TOKEN, members: [{ userId: ALICE, name: "alice" }] });
    fake.trustInThisProcess();
    connection = joinWithAdapter(fake);
    await entersState(connection, VoiceConnectionStatus.Ready, 20_000);
    const resumesBefore = fake.voice.records.filter((r) => r.dir === "in" && r.op === 7).length;
    fake.voice.closeWith(4015);
    await fake.voice.waitFor(() => fake!.voice.records.some((r) => r.dir === "out" && r.op === 9));
    expect(fake.voice.records.filter((r) => r.dir === "in" && r.op === 7).length).toBe(resumesBefore + 1);
    const disconnected = entersState(connection, VoiceConnectionStatus.Disconnected, 20_000);
    fake.voice.closeWith(4014);
    await disconnected;
  });
});

describe("fake Discord REST and gateway with discord.js", () => {
  it("logs in, gets READY and GUILD_CREATE, registers commands and answers an interaction", async () => {
    fake = await startFakeDiscord({
      token: TOKEN,
      members: [{ userId: ALICE, name: "alice" }],
      allowedPrivilegedIntents: GatewayIntentBits.GuildMembers,
    });
    fake.trustInThisProcess();
    client = new Client({
      intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildVoiceStates, GatewayIntentBits.GuildMembers],
      rest: { api: fake.restApi },
    });
    const ready = once(client, Events.ClientReady);
    await client.login(TOKEN);
    await ready;
    const f = fake;
    const guild = await client.guilds.fetch(f.guildId);
    expect(guild.channels.cache.get(f.voiceChannelId)?.isVoiceBased()).toBe(true);
    expect((await guild.members.fetch({ user: ALICE, force: true })).user.username).toBe("alice");
    const joined = once(client, Events.GuildMemberAdd);
    f.addMember({ userId: BOB, name: "bob" });
    expect((await joined)[0].user.username).toBe("bob");
    expect((await client.channels.fetch(f.textChannelId, { force: true }))?.isTextBased()).toBe(true);
    await client.application?.commands.set(
      [{ name: "join", description: "join my voice channel" }],
      f.guildId,
    );
    expect(f.rest.some((r) => r.method === "PUT" && r.path.endsWith(`/guilds/${f.guildId}/commands`))).toBe(
      true,
    );

    f.memberJoinsVoice(ALICE);
    client.on(Events.InteractionCreate, (interaction: Interaction) => {
      if (!interaction.isChatInputCommand()) return;
      const channel = interaction.guild?.voiceStates.cache.get(interaction.user.id)?.channelId;
      void interaction.reply(`joining ${channel}`);
    });
    const { id } = f.interaction("join", { userId: ALICE });
    const reply = await f.waitForRest((r) => r.path.startsWith(`/interactions/${id}/`));
    expect(reply.body).toMatchObject({ type: 4, data: { content: `joining ${f.voiceChannelId}` } });
    expect(f.gateway.identifies[0]?.intents).toBe(
      GatewayIntentBits.Guilds | GatewayIntentBits.GuildVoiceStates | GatewayIntentBits.GuildMembers,
    );
    expect(f.gateway.identifiedWithoutVoiceStates).toBe(false);

    // Voice through discord.js's own adapter: op 4 → VOICE_STATE_UPDATE + VOICE_SERVER_UPDATE.
    connection = joinVoiceChannel({
      guildId: f.guildId,
      channelId: f.voiceChannelId,
      selfDeaf: false,
      adapterCreator: guild.voiceAdapterCreator,
    });
    await entersState(connection, VoiceConnectionStatus.Ready, 20_000);
    const alice = f.member(ALICE);
    await f.daveJoined(ALICE);
    expect(botPrivacyCode(connection)).toBe(alice.privacyCode);
    expect(guild.voiceStates.cache.get(f.botUserId)?.channelId).toBe(f.voiceChannelId);
    const dir = mkdtempSync(join(tmpdir(), "fake-discord-wav-"));
    try {
      const wav = join(dir, "speech.wav");
      writeFileSync(wav, encodeWav(speech.pcm, speech.rate));
      expect(await received(connection, ALICE, () => alice.say(wav))).toBeGreaterThanOrEqual(50);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    // A dropped gateway connection resumes the session.
    f.gateway.closeWith(4000);
    await f.gateway.waitFor(() => f.gateway.records.some((r) => r.dir === "out" && r.t === "RESUMED"));
    expect(f.gateway.identifies).toHaveLength(1);
  });

  it("with two shards, only the shard that owns the guild gets it and its interactions", async () => {
    fake = await startFakeDiscord({ token: TOKEN, shards: 2, members: [{ userId: ALICE, name: "alice" }] });
    const f = fake;
    const owner = Number((BigInt(f.guildId) >> 22n) % 2n);
    const shardClients = [0, 1].map(
      (shard) =>
        new Client({
          intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildVoiceStates],
          rest: { api: f.restApi },
          shards: shard,
          shardCount: 2,
        }),
    );
    try {
      const interactions = [0, 0];
      shardClients.forEach((c, shard) => {
        c.on(Events.InteractionCreate, (interaction) => {
          interactions[shard]!++;
          if (interaction.isChatInputCommand()) void interaction.reply("ok");
        });
      });
      await Promise.all(
        shardClients.map(async (c) => {
          const ready = once(c, Events.ClientReady);
          await c.login(TOKEN);
          await ready;
        }),
      );
      expect(f.gateway.identifies.map((i) => i.shard)).toEqual(
        expect.arrayContaining([
          [0, 2],
          [1, 2],
        ]),
      );
      expect(shardClients[owner]!.guilds.cache.has(f.guildId)).toBe(true);
      expect(shardClients[1 - owner]!.guilds.cache.has(f.guildId)).toBe(false);
      const { id } = f.interaction("join", { userId: ALICE });
      await f.waitForRest((r) => r.path.startsWith(`/interactions/${id}/`));
      expect(interactions[owner]).toBe(1);
      expect(interactions[1 - owner]).toBe(0);
    } finally {
      await Promise.all(shardClients.map((c) => c.destroy()));
    }
  });

  it("rejects a bad token (REST 401) and disallowed intents (close 4014)", async () => {
    fake = await startFakeDiscord({ token: TOKEN });
    const res = await fetch(`${fake.restApi}/v10/users/@me`, { headers: { authorization: "Bot wrong" } });
    expect(res.status).toBe(401);
    client = new Client({
      intents: [GatewayIntentBits.Guilds, GatewayIntentBits.MessageContent],
      rest: { api: fake.restApi },
    });
    await expect(client.login(TOKEN)).rejects.toThrow(/disallowed intents|4014/i);
  });
});

describe("fake Discord protocol edges with a raw WebSocket", () => {
  async function closeCode(url: string, messages: unknown[]): Promise<number> {
    const ws = new WebSocket(url);
    const [hello] = (await once(ws, "message")) as [Buffer];
    expect(JSON.parse(String(hello)).op).toBeGreaterThanOrEqual(8); // 10 on the gateway, 8 on voice
    for (const m of messages) ws.send(JSON.stringify(m));
    const [code] = (await once(ws, "close")) as [number];
    return code;
  }

  it("gateway: a bad token closes 4004; no GuildVoiceStates intent is accepted but recorded", async () => {
    fake = await startFakeDiscord({ token: TOKEN });
    const url = `${fake.gatewayUrl}/?v=10&encoding=json`;
    const identify = {
      op: 2,
      d: { token: "wrong", intents: 1, properties: { os: "linux", browser: "t", device: "t" } },
    };
    expect(await closeCode(url, [identify])).toBe(4004);
    client = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: fake.restApi } });
    const ready = once(client, Events.ClientReady);
    await client.login(TOKEN);
    await ready;
    expect(fake.gateway.identifiedWithoutVoiceStates).toBe(true);
    // Discord then sends the bot no voice states, its own included, so the voice connection never starts.
    const f = fake;
    const guild = await client.guilds.fetch(f.guildId);
    connection = joinVoiceChannel({
      guildId: f.guildId,
      channelId: f.voiceChannelId,
      adapterCreator: guild.voiceAdapterCreator,
    });
    await f.gateway.waitFor(() => f.gateway.records.some((r) => r.t === "VOICE_SERVER_UPDATE"));
    expect(f.gateway.records.filter((r) => r.t === "VOICE_STATE_UPDATE")).toEqual([]);
    expect(connection.state.status).not.toBe(VoiceConnectionStatus.Ready);
  });

  it("a child process trusts the voice gateway's certificate through NODE_EXTRA_CA_CERTS", async () => {
    fake = await startFakeDiscord({ token: TOKEN });
    const script = `const ws = new (require("ws"))(process.argv[1]);
      ws.on("message", (m) => { console.log(JSON.parse(m).op); ws.close(); });
      ws.on("error", (e) => { console.error(e.message); process.exit(1); });`;
    const child = spawn(process.execPath, ["-e", script, `wss://${fake.voice.endpoint}/?v=8`], {
      env: { ...process.env, NODE_EXTRA_CA_CERTS: fake.caCertPath },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d;
    });
    child.stderr.on("data", (d: Buffer) => {
      err += d;
    });
    const [code] = (await once(child, "exit")) as [number];
    expect({ code, out: out.trim(), err }).toEqual({ code: 0, out: "8", err: "" });
  });

  it("voice gateway: Identify without a granted session closes 4006, with a wrong token 4004", async () => {
    fake = await startFakeDiscord({ token: TOKEN });
    fake.trustInThisProcess();
    const url = `wss://${fake.voice.endpoint}/?v=8`;
    const identify = (token: string) => ({
      op: 0,
      d: {
        server_id: fake!.guildId,
        user_id: fake!.botUserId,
        session_id: "s1",
        token,
        max_dave_protocol_version: 1,
      },
    });
    expect(await closeCode(url, [identify("anything")])).toBe(4006);
    const grant = fake.botVoiceStateUpdate(fake.voiceChannelId, "s1");
    expect(grant).toBeDefined();
    expect(await closeCode(url, [identify(`${grant?.token}-wrong`)])).toBe(4004);
  });
});
