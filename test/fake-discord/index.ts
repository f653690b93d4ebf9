// A fake Discord for tests, following the published protocol so the real, unmodified bot (discord.js 14,
// @discordjs/voice 0.19, davey) runs against it. Usage:
//
//   const fake = await startFakeDiscord({ token: "bot-token", members: [{ userId, name }] });
//   new Client({ intents, rest: { api: fake.restApi } }).login("bot-token"); // gateway URL from /gateway/bot
//   // or a child process: DISCORD_API_BASE=fake.restApi, NODE_EXTRA_CA_CERTS=fake.caCertPath
//   fake.memberJoinsVoice(userId);                  // VOICE_STATE_UPDATE into fake.voiceChannelId
//   const { id } = fake.interaction("join", { userId }); // INTERACTION_CREATE; reply in fake.rest
//   await fake.daveJoined(userId);                  // bot connected, member in its DAVE group
//   await fake.member(userId).say("hello.wav");    // Opus, DAVE + transport encrypted, 20 ms pacing
//   fake.member(userId).agentSpeechSpans();         // what the bot said, with arrival times
//   fake.member(userId).heardTimeline();            // ... as 48 kHz PCM with the gaps kept
//   fake.voice.closeWith(4015);                     // voice server crash (the library resumes)
//   fake.gateway.reconnect(); fake.gateway.invalidSession(false); // gateway op 7 / op 9
//   await fake.voice.downgradeDave(); await fake.voice.upgradeDave(); // protocol version transitions
//   fake.moveVoiceServer();                         // a new VOICE_SERVER_UPDATE mid-call
//   fake.voice.clearMediaFrames;                    // bot media that arrived unencrypted in a DAVE call
//   await fake.close();
//
// The voice gateway is wss:// with a self-signed certificate for 127.0.0.1 made at start: a child process
// trusts it with NODE_EXTRA_CA_CERTS=fake.caCertPath (read at process start); the test process itself with
// fake.trustInThisProcess() (tls.setDefaultCACertificates). One guild with one voice and one text channel
// (any number of shards; the owning one gets it), one bot voice connection at a time.

import { once } from "node:events";
import { createServer } from "node:http";
import { makeSelfSignedCert, removeCert, trustInThisProcess } from "../helpers/tls-cert.ts";
import { FakeGateway, type GatewayHooks, nextSnowflake } from "./gateway.ts";
import type { World } from "./guild.ts";
import { SimulatedMember } from "./member.ts";
import { handleRest, type RestRecord } from "./rest.ts";
import type { TransportMode } from "./transport-crypto.ts";
import { FakeVoiceServer } from "./voice-gateway.ts";

export type { HeardFrame } from "./member.ts";
export { SimulatedMember } from "./member.ts";
export type { RestRecord } from "./rest.ts";
export { AES_GCM_MODE, type TransportMode, XCHACHA_MODE } from "./transport-crypto.ts";

export interface FakeDiscordOptions {
  /** The bot token the fake accepts (REST `Bot <token>`, gateway Identify). */
  token: string;
  /** Members of the guild (not yet in voice). */
  members?: { userId: string; name: string }[];
  /** Privileged intents the application is allowed (bitfield). Default none. */
  allowedPrivilegedIntents?: number;
  /** Shards /gateway/bot recommends (the guild goes to shard (guild_id >> 22) % count). Default 1. */
  shards?: number;
  /** Offer DAVE (dave_protocol_version 1 when the client supports it). Default true. */
  dave?: boolean;
  /** Transport encryption modes offered, in order. Default AES-256-GCM then XChaCha20-Poly1305 (rtpsize). */
  modes?: readonly TransportMode[];
  /** How long members take to answer DAVE (the bot's key package, a newcomer's join), ms. Default 0. */
  daveDelayMs?: number;
}

/** One guild of the fake: its voice channel, voice server and members. */
export interface FakeGuild {
  readonly guildId: string;
  readonly voiceChannelId: string;
  readonly textChannelId: string;
  readonly voice: FakeVoiceServer;
  member(userId: string): SimulatedMember;
  /** A new member joins the guild (GUILD_MEMBER_ADD); returns its simulated member. */
  addMember(info: { userId: string; name: string }): SimulatedMember;
  memberJoinsVoice(userId: string): void;
  memberLeavesVoice(userId: string): void;
  /** A slash command from a member (in the voice channel by default). */
  interaction(
    name: string,
    from: { userId: string; channelId?: string; options?: { name: string; type: number; value: unknown }[] },
  ): { id: string; token: string };
  /**
   * Resolves once the member is in the bot's DAVE group and the transition that added it has executed
   * (same privacy code on both sides, audio decrypts both ways).
   */
  daveJoined(userId: string): Promise<void>;
  /**
   * What the gateway does for the bot's op 4 (for @discordjs/voice used without discord.js): records the
   * bot in `channelId` (null: leaves) and returns VOICE_SERVER_UPDATE's endpoint and token.
   */
  botVoiceStateUpdate(
    channelId: string | null,
    sessionId: string,
  ): { endpoint: string; token: string } | undefined;
  /**
   * The bot's voice session moves (as when Discord moves a call to another voice server): a new token
   * in a new VOICE_SERVER_UPDATE; the bot must identify again, and the new call runs a new DAVE group.
   */
  moveVoiceServer(): void;
}

/** The fake Discord: its first guild's accessors, plus what all guilds share. */
export interface FakeDiscord extends FakeGuild {
  /** For discord.js `rest: { api }` or DISCORD_API_BASE: `http://127.0.0.1:PORT/api`. */
  readonly restApi: string;
  readonly gatewayUrl: string;
  readonly caCertPath: string;
  readonly botUserId: string;
  readonly applicationId: string;
  readonly gateway: FakeGateway;
  /** REST writes: command registrations, interaction callbacks, webhook edits, channel messages. */
  readonly rest: RestRecord[];
  /** Another guild the bot is in (GUILD_CREATE to its shard), with its own voice channel and voice server. */
  addGuild(options: { members?: { userId: string; name: string }[] }): Promise<FakeGuild>;
  /** Resolves with the first REST write matching `test`, waiting for it if need be. */
  waitForRest(test: (r: RestRecord) => boolean): Promise<RestRecord>;
  trustInThisProcess(): void;
  close(): Promise<void>;
}

export async function startFakeDiscord(options: FakeDiscordOptions): Promise<FakeDiscord> {
  const cert = makeSelfSignedCert();
  const botUserId = nextSnowflake();
  const applicationId = botUserId;
  const rest: RestRecord[] = [];
  const restWaiters = new Set<() => void>();
  let port = 0;
  const user = {
    id: botUserId,
    username: "voice-bridge",
    discriminator: "0",
    global_name: null,
    avatar: null,
    bot: true,
    flags: 0,
  };
  const guilds = new Map<string, { world: World; guild: FakeGuild; botVoice: GatewayHooks["botVoice"] }>();
  const worlds: World[] = [];
  let gateway: FakeGateway | undefined;
  const theGateway = (): FakeGateway => {
    if (!gateway) throw new Error("fake Discord: the gateway is not up yet");
    return gateway;
  };

  async function makeGuild(members: { userId: string; name: string }[]) {
    const voice = await FakeVoiceServer.start(cert, {
      dave: options.dave ?? true,
      ...(options.modes ? { modes: options.modes } : {}),
      ...(options.daveDelayMs !== undefined ? { daveDelayMs: options.daveDelayMs } : {}),
    });
    const guildId = nextSnowflake();
    const voiceChannelId = nextSnowflake();
    const textChannelId = nextSnowflake();
    const memberInfos = [...members];
    const simulated = new Map(memberInfos.map((m, i) => [m.userId, new SimulatedMember(m, 2001 + i)]));
    const voiceChannels = new Map<string, string>();
    const world: World = {
      token: options.token,
      guildId,
      voiceChannelId,
      textChannelId,
      user: { id: botUserId, username: user.username },
      applicationId,
      gatewayUrl: () => `ws://127.0.0.1:${port}`,
      shards: options.shards ?? 1,
      allowedPrivilegedIntents: options.allowedPrivilegedIntents ?? 0,
      members: memberInfos,
      voiceChannels,
    };
    const botVoice = (
      _world: World,
      channelId: string | null,
      sessionId: string,
    ): { endpoint: string; token: string } | undefined => {
      if (channelId === null) {
        voiceChannels.delete(botUserId);
        voice.revoke();
        return undefined;
      }
      voiceChannels.set(botUserId, channelId);
      const token = nextSnowflake();
      voice.grant({ guildId, channelId, userId: botUserId, sessionId, token });
      for (const [id, m] of simulated) if (voiceChannels.get(id) === channelId) voice.memberJoined(m);
      return { endpoint: voice.endpoint, token };
    };
    const member = (userId: string): SimulatedMember => {
      const m = simulated.get(userId);
      if (!m) throw new Error(`no simulated member ${userId}; members: ${[...simulated.keys()].join(", ")}`);
      return m;
    };
    const guild: FakeGuild = {
      guildId,
      voiceChannelId,
      textChannelId,
      voice,
      member,
      async daveJoined(userId) {
        const m = member(userId);
        await voice.waitFor(() => m.privacyCode !== "");
        await voice.daveSettled();
      },
      addMember(info) {
        if (simulated.has(info.userId)) throw new Error(`member ${info.userId} is already in the fake guild`);
        const m = new SimulatedMember(info, 2001 + simulated.size);
        simulated.set(info.userId, m);
        memberInfos.push(info);
        theGateway().memberAdded(info.userId, world);
        return m;
      },
      memberJoinsVoice(userId) {
        const m = member(userId);
        voiceChannels.set(userId, voiceChannelId);
        theGateway().memberVoice(userId, voiceChannelId, world);
        if (voiceChannels.get(botUserId) === voiceChannelId) voice.memberJoined(m);
      },
      memberLeavesVoice(userId) {
        const m = member(userId);
        voiceChannels.delete(userId);
        theGateway().memberVoice(userId, null, world);
        voice.memberLeft(m);
      },
      interaction(name, from) {
        return theGateway().interaction(
          name,
          { ...from, channelId: from.channelId ?? voiceChannelId },
          world,
        );
      },
      botVoiceStateUpdate: (channelId, sessionId) => botVoice(world, channelId, sessionId),
      moveVoiceServer() {
        const grant = voice.currentGrant;
        if (!grant) throw new Error("the bot is in no voice channel to move");
        const token = nextSnowflake();
        voice.grant({ ...grant, token });
        theGateway().voiceServerUpdate({ token, endpoint: voice.endpoint }, world);
      },
    };
    guilds.set(guildId, { world, guild, botVoice });
    worlds.push(world);
    return { world, guild };
  }

  const first = await makeGuild(options.members ?? []);
  gateway = new FakeGateway(first.world, {
    botVoice: (world, channelId, sessionId) =>
      guilds.get(world.guildId)?.botVoice(world, channelId, sessionId),
  });
  const theFirst = first.guild;
  const world = first.world;
  const server = createServer((req, res) => {
    handleRest(
      {
        world,
        worlds: () => worlds,
        user,
        application: {
          id: applicationId,
          name: "voice-bridge",
          flags: 0,
          bot_public: true,
          bot: user,
          description: "",
        },
        onRecord: (r) => {
          rest.push(r);
          for (const w of [...restWaiters]) w();
        },
        nextId: nextSnowflake,
      },
      req,
      res,
    ).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  server.on("upgrade", (req, socket, head) => {
    gateway.wss.handleUpgrade(req, socket, head, (ws) => gateway.wss.emit("connection", ws, req));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("fake Discord did not bind");
  port = address.port;

  return {
    ...theFirst,
    restApi: `http://127.0.0.1:${port}/api`,
    gatewayUrl: `ws://127.0.0.1:${port}`,
    caCertPath: cert.certPath,
    botUserId,
    applicationId,
    gateway,
    rest,
    async addGuild(opts) {
      const { world: w, guild } = await makeGuild(opts.members ?? []);
      theGateway().addGuild(w);
      return guild;
    },
    waitForRest(test) {
      return new Promise((resolve) => {
        const check = () => {
          const found = rest.find(test);
          if (!found) return;
          restWaiters.delete(check);
          resolve(found);
        };
        restWaiters.add(check);
        check();
      });
    },
    trustInThisProcess: () => trustInThisProcess(cert.cert),
    async close() {
      gateway.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      for (const { guild } of guilds.values()) await guild.voice.close();
      removeCert(cert);
    },
  };
}
