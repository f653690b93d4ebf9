// A Discord gateway and REST API without voice, per API v10's documentation, for what the bot does
// before any audio: Hello (op 10), Identify → READY then GUILD_CREATE of one guild (roles, a voice
// channel, members and their voice states), heartbeat ACKs (op 11), slash command registration
// (PUT /applications/{app}/guilds/{guild}/commands) and interaction responses (POST
// /interactions/{id}/{token}/callback, PATCH /webhooks/{app}/{token}/messages/@original).
// The test injects INTERACTION_CREATE dispatches. Loopback, ephemeral port.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";

export const APP_ID = "500000000000000005";
export const BOT_ID = APP_ID;
export const GUILD_ID = "600000000000000006";
export const CHANNEL_ID = "700000000000000007";
export const BOT_ROLE_ID = "800000000000000008";
export const MEMBER_ID = "900000000000000009";

export interface Reply {
  path: string;
  body: { type?: number; data?: { content?: string; flags?: number }; content?: string; flags?: number };
}

export interface TextGateway {
  apiBase: string;
  /** The shard each Identify (op 2) named, [id, count]. */
  identifies: Array<[number, number] | undefined>;
  /** Channels the bot asked to be in (op 4), null for leaving. */
  voiceUpdates: Array<string | null>;
  /** Commands registered, by guild id. */
  commands: Map<string, Array<{ name: string }>>;
  replies: Reply[];
  /** Sends INTERACTION_CREATE for a slash command by the member; resolves when the bot has answered (callback, then the edit for a deferred reply). */
  command(name: "join" | "leave", memberInVoice: boolean): Promise<Reply[]>;
  /** The member moves into the voice channel, or out of it (VOICE_STATE_UPDATE). */
  memberVoice(inChannel: boolean): void;
  close(): Promise<void>;
}

/**
 * `botDenied`: permissions the voice channel's overwrite denies the bot's role. `voiceEndpoint`: the
 * voice server a Voice State Update (op 4) from the bot is sent to (VOICE_SERVER_UPDATE).
 */
export async function startTextGateway(opts: {
  botDenied: bigint;
  voiceEndpoint?: string;
}): Promise<TextGateway> {
  const voiceUpdates: Array<string | null> = [];
  const identifies: Array<[number, number] | undefined> = [];
  const commands = new Map<string, Array<{ name: string }>>();
  const replies: Reply[] = [];
  const waiters: Array<() => void> = [];
  let port = 0;
  let seq = 0;
  let socket: WebSocket | undefined;
  let interactionN = 0;
  const dispatch = (t: string, d: unknown) => socket?.send(JSON.stringify({ op: 0, t, s: ++seq, d }));

  const http: Server = createServer(async (req, res) => {
    const body = await readJson(req);
    const url = req.url ?? "";
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    if (req.method === "GET" && url === "/api/v10/gateway/bot") {
      return json(200, {
        url: `ws://127.0.0.1:${port}`,
        shards: 1,
        session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 },
      });
    }
    const reg = url.match(/^\/api\/v10\/applications\/(\d+)\/guilds\/(\d+)\/commands$/);
    if (req.method === "PUT" && reg) {
      const list = (body as Array<{ name: string }>).map((c, i) => ({
        ...c,
        id: `10000000000000000${i}`,
        application_id: reg[1],
        guild_id: reg[2],
        version: "1",
        type: 1,
        default_member_permissions: null,
      }));
      commands.set(reg[2]!, list);
      return json(200, list);
    }
    if (req.method === "POST" && /^\/api\/v10\/interactions\/\d+\/[^/]+\/callback/.test(url)) {
      replies.push({ path: url, body: body as Reply["body"] });
      for (const w of waiters.splice(0)) w();
      res.writeHead(204);
      return res.end();
    }
    if (req.method === "PATCH" && /^\/api\/v10\/webhooks\/\d+\/[^/]+\/messages\/(@|%40)original/.test(url)) {
      replies.push({ path: url, body: body as Reply["body"] });
      for (const w of waiters.splice(0)) w();
      return json(200, message((body as { content?: string }).content ?? ""));
    }
    json(404, { message: "404: Not Found", code: 0 });
  });

  const wss = new WebSocketServer({ server: http });
  wss.on("connection", (ws) => {
    ws.send(JSON.stringify({ op: 10, d: { heartbeat_interval: 41250 }, s: null, t: null }));
    ws.on("message", (data) => {
      const msg = JSON.parse(String(data)) as { op: number };
      if (msg.op === 1) ws.send(JSON.stringify({ op: 11, d: null, s: null, t: null }));
      if (msg.op === 4) {
        const d = (msg as unknown as { d: { channel_id: string | null } }).d;
        voiceUpdates.push(d.channel_id);
        dispatch("VOICE_STATE_UPDATE", {
          ...voiceState(d.channel_id),
          user_id: BOT_ID,
          member: {
            user: { id: BOT_ID, username: "agent", discriminator: "0", avatar: null, bot: true },
            roles: [BOT_ROLE_ID],
            joined_at: "2026-01-01T00:00:00.000Z",
            deaf: false,
            mute: false,
          },
          session_id: "bot-voice-session",
        });
        if (d.channel_id && opts.voiceEndpoint)
          dispatch("VOICE_SERVER_UPDATE", {
            token: "voice-token",
            guild_id: GUILD_ID,
            endpoint: opts.voiceEndpoint,
          });
      }
      if (msg.op !== 2) return;
      const shard = (msg as unknown as { d: { shard?: [number, number] } }).d.shard;
      identifies.push(shard);
      // The guild belongs to shard (guild_id >> 22) % shard_count: only that one hears of it.
      const ours = !shard || Number((BigInt(GUILD_ID) >> 22n) % BigInt(shard[1])) === shard[0];
      const send = (t: string, d: unknown) => ws.send(JSON.stringify({ op: 0, t, s: ++seq, d }));
      if (ours) socket = ws;
      send("READY", {
        v: 10,
        user: {
          id: BOT_ID,
          username: "agent",
          discriminator: "0",
          global_name: null,
          avatar: null,
          bot: true,
        },
        guilds: ours ? [{ id: GUILD_ID, unavailable: true }] : [],
        session_id: "session-1",
        resume_gateway_url: `ws://127.0.0.1:${port}`,
        application: { id: APP_ID, flags: 0 },
      });
      if (ours) send("GUILD_CREATE", guild(opts.botDenied));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  port = (http.address() as AddressInfo).port;

  return {
    apiBase: `http://127.0.0.1:${port}/api`,
    commands,
    replies,
    voiceUpdates,
    identifies,
    async command(name, memberInVoice) {
      const before = replies.length;
      const n = ++interactionN;
      if (memberInVoice) dispatch("VOICE_STATE_UPDATE", voiceState(CHANNEL_ID));
      else dispatch("VOICE_STATE_UPDATE", voiceState(null));
      dispatch("INTERACTION_CREATE", interaction(n, name));
      // /join defers then edits (two answers); /leave and refusals answer once.
      const want = name === "join" && memberInVoice ? 2 : 1;
      while (replies.length - before < want) await new Promise<void>((r) => waiters.push(r));
      return replies.slice(before);
    },
    memberVoice(inChannel) {
      dispatch("VOICE_STATE_UPDATE", voiceState(inChannel ? CHANNEL_ID : null));
    },
    async close() {
      for (const c of wss.clients) c.terminate();
      wss.close();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

const memberUser = {
  id: MEMBER_ID,
  username: "alice",
  discriminator: "0",
  global_name: "Alice",
  avatar: null,
};

function member() {
  return {
    user: memberUser,
    roles: [],
    joined_at: "2026-01-01T00:00:00.000Z",
    deaf: false,
    mute: false,
    nick: null,
    flags: 0,
  };
}

function voiceState(channelId: string | null) {
  return {
    guild_id: GUILD_ID,
    channel_id: channelId,
    user_id: MEMBER_ID,
    member: member(),
    session_id: "member-session",
    deaf: false,
    mute: false,
    self_deaf: false,
    self_mute: false,
    self_video: false,
    suppress: false,
    request_to_speak_timestamp: null,
  };
}

function guild(botDenied: bigint) {
  const role = (id: string, name: string, permissions: bigint, position: number) => ({
    id,
    name,
    permissions: permissions.toString(),
    position,
    color: 0,
    hoist: false,
    managed: false,
    mentionable: false,
    flags: 0,
  });
  return {
    id: GUILD_ID,
    name: "Test Server",
    owner_id: MEMBER_ID,
    unavailable: false,
    member_count: 2,
    large: false,
    joined_at: "2026-01-01T00:00:00.000Z",
    // @everyone: View Channel, Connect, Speak, Use Application Commands.
    roles: [
      role(GUILD_ID, "@everyone", (1n << 10n) | (1n << 20n) | (1n << 21n) | (1n << 31n), 0),
      role(BOT_ROLE_ID, "agent", 0n, 1),
    ],
    channels: [
      {
        id: CHANNEL_ID,
        type: 2,
        guild_id: GUILD_ID,
        name: "Lounge",
        position: 0,
        bitrate: 64000,
        user_limit: 0,
        permission_overwrites: [{ id: BOT_ROLE_ID, type: 0, allow: "0", deny: botDenied.toString() }],
      },
    ],
    members: [
      {
        user: { id: BOT_ID, username: "agent", discriminator: "0", avatar: null, bot: true },
        roles: [BOT_ROLE_ID],
        joined_at: "2026-01-01T00:00:00.000Z",
        deaf: false,
        mute: false,
      },
      member(),
    ],
    voice_states: [],
    presences: [],
    threads: [],
    stage_instances: [],
    guild_scheduled_events: [],
    emojis: [],
    stickers: [],
    features: [],
  };
}

function interaction(n: number, name: string) {
  return {
    id: `11000000000000000${n}`,
    application_id: APP_ID,
    type: 2,
    data: { id: "100000000000000000", name, type: 1 },
    guild_id: GUILD_ID,
    channel_id: CHANNEL_ID,
    channel: { id: CHANNEL_ID, type: 2 },
    member: { ...member(), permissions: "2150630400" },
    token: `token-${n}`,
    version: 1,
    app_permissions: "2150630400",
    locale: "en-US",
    guild_locale: "en-US",
    entitlements: [],
    authorizing_integration_owners: { "0": GUILD_ID },
    context: 0,
  };
}

function message(content: string) {
  return {
    id: "120000000000000001",
    channel_id: CHANNEL_ID,
    type: 20,
    content,
    author: { id: BOT_ID, username: "agent", discriminator: "0", avatar: null, bot: true },
    attachments: [],
    embeds: [],
    mentions: [],
    mention_roles: [],
    pinned: false,
    mention_everyone: false,
    tts: false,
    timestamp: "2026-01-01T00:00:00.000Z",
    edited_timestamp: null,
    flags: 64,
    components: [],
  };
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (!text) return undefined;
  // discord.js sends multipart only with files; these answers are JSON.
  return JSON.parse(text);
}
