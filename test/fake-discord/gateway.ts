// The fake Discord's REST API and gateway (v10, JSON, no compression), as discord.js 14 uses them:
// GET /gateway/bot gives the gateway URL; Identify (token and intents checked as Discord does:
// 4004 for a bad token, 4014 for privileged intents the app may not use) → READY, then a
// GUILD_CREATE per guild of the shard; the bot's voice state update (op 4) is answered with
// VOICE_STATE_UPDATE and VOICE_SERVER_UPDATE; tests send interactions and members' voice states.
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";
import type { FakeVoiceServer } from "./voice-server.ts";
import {
  EVERYONE_ALLOWED,
  type FakeGuild,
  type FakeUser,
  guildCreateJson,
  memberJson,
  snowflake,
  userJson,
  voiceStateJson,
} from "./world.ts";

const PRIVILEGED_INTENTS = (1 << 1) | (1 << 8) | (1 << 15);
export const INTENT_GUILD_VOICE_STATES = 1 << 7;

export interface RestCall {
  method: string;
  path: string;
  body: unknown;
}

interface Shard {
  ws: WebSocket;
  seq: number;
  sessionId: string;
  /** [id, count] from Identify. */
  shard: [number, number];
  intents: number;
}

export class FakeGateway {
  readonly token: string;
  readonly application: { id: string; name: string };
  readonly bot: FakeUser;
  readonly guilds: FakeGuild[];
  readonly restCalls: RestCall[] = [];
  readonly identifies: { intents: number; shard: [number, number] }[] = [];
  /** Close codes the gateway sent, in order. */
  readonly closes: number[] = [];
  readonly #voice: FakeVoiceServer;
  readonly #http: Server;
  readonly #wss: WebSocketServer;
  readonly #shards = new Set<Shard>();
  readonly #shardCount: number;
  port = 0;

  constructor(opts: {
    token: string;
    guilds: FakeGuild[];
    voice: FakeVoiceServer;
    shardCount?: number;
  }) {
    this.token = opts.token;
    this.application = { id: snowflake(), name: "Voice Bridge Test" };
    this.bot = { id: this.application.id, username: "Ava", bot: true };
    this.guilds = opts.guilds;
    this.#voice = opts.voice;
    this.#shardCount = opts.shardCount ?? 1;
    this.#http = createServer((req, res) => void this.#rest(req, res));
    this.#wss = new WebSocketServer({ server: this.#http, path: "/gateway" });
    this.#wss.on("connection", (ws) => this.#accept(ws));
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.#http.listen(0, "127.0.0.1", resolve));
    this.port = (this.#http.address() as AddressInfo).port;
  }

  /** The REST base a bot is configured with (DISCORD_API_BASE). */
  get apiBase(): string {
    return `http://127.0.0.1:${this.port}/api`;
  }

  get connected(): number {
    return this.#shards.size;
  }

  // ---- test controls ----------------------------------------------------------------

  /** A member uses a slash command in a guild's text channel, as the Discord client sends it. */
  interaction(name: "join" | "leave", guildId: string, user: FakeUser): string {
    const guild = this.#guild(guildId);
    const text = guild.channels.find((c) => c.type === 0)!;
    const id = snowflake();
    this.#dispatchTo(guildId, "INTERACTION_CREATE", {
      id,
      application_id: this.application.id,
      type: 2,
      data: { id: snowflake(), name, type: 1, guild_id: guildId },
      guild_id: guildId,
      channel_id: text.id,
      channel: { id: text.id, type: 0, name: text.name, guild_id: guildId },
      member: { ...memberJson(user), permissions: EVERYONE_ALLOWED.toString() },
      token: `itok-${id}`,
      version: 1,
      app_permissions: EVERYONE_ALLOWED.toString(),
      locale: "en-US",
      guild_locale: "en-US",
      entitlements: [],
      authorizing_integration_owners: { "0": guildId },
      context: 0,
    });
    return id;
  }

  /** A human member enters (or, with null, leaves) a voice channel. */
  memberVoice(guildId: string, user: FakeUser, channelId: string | null): void {
    const guild = this.#guild(guildId);
    if (channelId) guild.voice.set(user.id, channelId);
    else guild.voice.delete(user.id);
    this.#dispatchTo(guildId, "VOICE_STATE_UPDATE", {
      ...voiceStateJson(guildId, user.id, channelId, `vs-${user.id}`),
      member: memberJson(user),
    });
  }

  /** Closes every gateway connection with a close code. */
  closeAll(code: number): void {
    for (const s of this.#shards) s.ws.close(code);
  }

  async close(): Promise<void> {
    for (const c of this.#wss.clients) c.terminate();
    await new Promise((resolve) => this.#wss.close(resolve));
    await new Promise((resolve) => this.#http.close(resolve));
  }

  // ---- gateway ----------------------------------------------------------------------

  #accept(ws: WebSocket): void {
    let shard: Shard | undefined;
    ws.send(JSON.stringify({ op: 10, d: { heartbeat_interval: 41_250 }, s: null, t: null }));
    ws.on("message", (data: Buffer) => {
      const msg = JSON.parse(data.toString()) as { op: number; d: Record<string, unknown> | number | null };
      if (msg.op === 1) {
        ws.send(JSON.stringify({ op: 11, d: null, s: null, t: null }));
      } else if (msg.op === 2) {
        shard = this.#identify(ws, msg.d as Record<string, unknown>);
      } else if (msg.op === 6) {
        // Resume: this fake keeps no replay buffer, so the session cannot be resumed.
        ws.send(JSON.stringify({ op: 9, d: false, s: null, t: null }));
      } else if (msg.op === 4 && shard) {
        this.#voiceStateUpdate(shard, msg.d as Record<string, unknown>);
      }
    });
    ws.on("close", () => {
      if (shard) this.#shards.delete(shard);
    });
  }

  #identify(ws: WebSocket, d: Record<string, unknown>): Shard | undefined {
    const close = (code: number, reason: string) => {
      this.closes.push(code);
      ws.close(code, reason);
      return undefined;
    };
    if (d.token !== this.token && d.token !== `Bot ${this.token}`)
      return close(4004, "Authentication failed.");
    const intents = Number(d.intents ?? 0);
    if (intents & PRIVILEGED_INTENTS) return close(4014, "Disallowed intent(s).");
    const [id, count] = (d.shard as [number, number] | undefined) ?? [0, 1];
    this.identifies.push({ intents, shard: [id, count] });
    const shard: Shard = { ws, seq: 0, sessionId: randomUUID(), shard: [id, count], intents };
    this.#shards.add(shard);
    const mine = this.guilds.filter((g) => Number((BigInt(g.id) >> 22n) % BigInt(count)) === id);
    this.#dispatch(shard, "READY", {
      v: 10,
      user: { ...userJson(this.bot), verified: true, mfa_enabled: false, flags: 0 },
      guilds: mine.map((g) => ({ id: g.id, unavailable: true })),
      session_id: shard.sessionId,
      resume_gateway_url: `ws://127.0.0.1:${this.port}/gateway`,
      shard: [id, count],
      application: { id: this.application.id, flags: 0 },
      private_channels: [],
      relationships: [],
      presences: [],
      guild_join_requests: [],
      geo_ordered_rtc_regions: [],
      user_settings: {},
    });
    for (const g of mine) this.#dispatch(shard, "GUILD_CREATE", guildCreateJson(g, this.bot));
    return shard;
  }

  /** The bot asks to join or leave a voice channel: its voice state, then (joining) a voice server. */
  #voiceStateUpdate(shard: Shard, d: Record<string, unknown>): void {
    const guildId = String(d.guild_id);
    const channelId = (d.channel_id as string | null) ?? null;
    const guild = this.#guild(guildId);
    const sessionId = `voice-${shard.sessionId}-${guildId}`;
    if (channelId) guild.voice.set(this.bot.id, channelId);
    else guild.voice.delete(this.bot.id);
    this.#dispatch(shard, "VOICE_STATE_UPDATE", {
      ...voiceStateJson(guildId, this.bot.id, channelId, sessionId),
      member: memberJson(this.bot),
    });
    if (!channelId) return;
    const token = randomUUID();
    this.#voice.grant({ guildId, channelId, userId: this.bot.id, sessionId, token });
    this.#dispatch(shard, "VOICE_SERVER_UPDATE", {
      token,
      guild_id: guildId,
      endpoint: `127.0.0.1:${this.#voice.port}`,
    });
  }

  #dispatch(shard: Shard, t: string, d: unknown): void {
    shard.seq += 1;
    shard.ws.send(JSON.stringify({ op: 0, t, s: shard.seq, d }));
  }

  #dispatchTo(guildId: string, t: string, d: unknown): void {
    for (const s of this.#shards) {
      if (Number((BigInt(guildId) >> 22n) % BigInt(s.shard[1])) === s.shard[0]) this.#dispatch(s, t, d);
    }
  }

  #guild(id: string): FakeGuild {
    const g = this.guilds.find((x) => x.id === id);
    if (!g) throw new Error(`fake Discord: no guild ${id}`);
    return g;
  }

  // ---- REST -------------------------------------------------------------------------

  async #rest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString();
    const url = new URL(req.url ?? "/", "http://x");
    const path = url.pathname.replace(/^\/api(\/v\d+)?/, "");
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    const method = req.method ?? "GET";
    this.restCalls.push({ method, path, body });
    const send = (status: number, json?: unknown) => {
      if (json === undefined) {
        res.writeHead(status).end(); // 204: no body, so no content type either
        return;
      }
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(json));
    };
    const interactionCallback = /^\/interactions\/\d+\/[^/]+\/callback$/.test(path);
    const webhook = path.startsWith(`/webhooks/${this.application.id}/`);
    if (!interactionCallback && !webhook && req.headers.authorization !== `Bot ${this.token}`) {
      send(401, { message: "401: Unauthorized", code: 0 });
      return;
    }
    if (method === "GET" && path === "/gateway/bot") {
      send(200, {
        url: `ws://127.0.0.1:${this.port}/gateway`,
        shards: this.#shardCount,
        session_start_limit: { total: 1000, remaining: 999, reset_after: 14_400_000, max_concurrency: 1 },
      });
    } else if (method === "GET" && path === "/users/@me") {
      send(200, userJson(this.bot));
    } else if (method === "GET" && path === "/applications/@me") {
      send(200, { id: this.application.id, name: this.application.name, flags: 0, bot: userJson(this.bot) });
    } else if (method === "PUT" && /^\/applications\/\d+(\/guilds\/\d+)?\/commands$/.test(path)) {
      const commands = (body as { name: string }[]).map((c) => ({
        ...c,
        id: snowflake(),
        application_id: this.application.id,
        version: snowflake(),
      }));
      send(200, commands);
    } else if (method === "POST" && interactionCallback) {
      if (url.searchParams.get("with_response") !== "true") send(204);
      else {
        const id = path.split("/")[2]!;
        const type = (body as { type?: number } | undefined)?.type ?? 4;
        send(200, {
          interaction: {
            id,
            type: 2,
            activity_instance_id: null,
            response_message_id: snowflake(),
            response_message_loading: type === 5,
            response_message_ephemeral: true,
          },
          resource: { type },
        });
      }
    } else if (webhook) {
      send(200, { id: snowflake(), channel_id: "0", content: (body as { content?: string })?.content ?? "" });
    } else if (method === "POST" && /^\/channels\/\d+\/messages$/.test(path)) {
      send(200, { id: snowflake(), content: (body as { content?: string })?.content ?? "" });
    } else {
      send(404, { message: "404: Not Found", code: 0 });
    }
  }
}
