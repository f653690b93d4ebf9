// Discord's REST API as discord.js 14 uses it with `rest: { api: "<base>/api" }` (requests go to
// `<base>/api/v10/...` with `Authorization: Bot <token>`): the gateway URL, the bot's user and application,
// the guild as GUILD_CREATE described it, command registration, interaction callbacks and channel messages. Writes are recorded for tests; a wrong
// token gets Discord's 401, an unknown route its 404.

import type { IncomingMessage, ServerResponse } from "node:http";
import { channels, guildCreate, type World } from "./guild.ts";

export interface RestRecord {
  method: string;
  path: string;
  body: unknown;
}

export interface RestContext {
  /** The first guild (token, gateway, shards). */
  world: World;
  /** Every guild the bot is in. */
  worlds(): readonly World[];
  user: Record<string, unknown>;
  application: Record<string, unknown>;
  /** Called for every recorded write (commands, callbacks, messages). */
  onRecord(record: RestRecord): void;
  nextId(): string;
}

const PREFIX = "/api/v10";

export async function handleRest(ctx: RestContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  const method = req.method ?? "GET";
  const raw = await readBody(req);
  const body = raw.length > 0 && (req.headers["content-type"] ?? "").includes("json") ? JSON.parse(raw) : raw;
  if (!url.pathname.startsWith(PREFIX)) return reply(res, 404, { message: "404: Not Found", code: 0 });
  const path = url.pathname.slice(PREFIX.length);
  const interactionCallback = /^\/interactions\/(\d+)\/([^/]+)\/callback$/.exec(path);
  // Interaction callbacks and webhooks authenticate by their token, not the bot's.
  const webhook = /^\/webhooks\/(\d+)\/([^/]+)(\/.*)?$/.exec(path);
  if (!interactionCallback && !webhook && req.headers.authorization !== `Bot ${ctx.world.token}`) {
    return reply(res, 401, { message: "401: Unauthorized", code: 0 });
  }
  const record = (): void => ctx.onRecord({ method, path, body });

  if (method === "GET" && path === "/gateway/bot") {
    return reply(res, 200, {
      url: ctx.world.gatewayUrl(),
      shards: ctx.world.shards,
      session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 },
    });
  }
  if (method === "GET" && path === "/gateway") return reply(res, 200, { url: ctx.world.gatewayUrl() });
  if (method === "GET" && path === "/users/@me") return reply(res, 200, ctx.user);
  if (method === "GET" && path === "/applications/@me") return reply(res, 200, ctx.application);
  let read: unknown;
  if (method === "GET") for (const w of ctx.worlds()) read ??= readGuild(w, path);
  if (read) return reply(res, 200, read);
  const commands = /^\/applications\/(\d+)(?:\/guilds\/(\d+))?\/commands$/.exec(path);
  if (commands && method === "PUT" && Array.isArray(body)) {
    record();
    const out = body.map((c: Record<string, unknown>) => ({
      id: ctx.nextId(),
      application_id: commands[1],
      ...(commands[2] ? { guild_id: commands[2] } : {}),
      version: ctx.nextId(),
      default_member_permissions: null,
      type: 1,
      ...c,
    }));
    return reply(res, 200, out);
  }
  if (commands && method === "GET") return reply(res, 200, []);
  if (interactionCallback && method === "POST") {
    record();
    if (url.searchParams.get("with_response") === "true") {
      return reply(res, 200, {
        interaction: {
          id: interactionCallback[1],
          type: 2,
          response_message_loading: false,
          response_message_ephemeral: false,
        },
        resource: { type: (body as { type?: number }).type ?? 4, message: message(ctx, "0", body) },
      });
    }
    res.writeHead(204).end();
    return;
  }
  if (webhook) {
    record();
    return reply(res, 200, message(ctx, "0", body));
  }
  const channelMessages = /^\/channels\/(\d+)\/messages$/.exec(path);
  if (channelMessages && method === "POST") {
    record();
    return reply(res, 200, message(ctx, channelMessages[1] ?? "0", body));
  }
  ctx.onRecord({ method, path: `UNHANDLED ${path}`, body });
  return reply(res, 404, { message: "404: Not Found", code: 0 });
}

/** GETs of what GUILD_CREATE already told the bot: the guild, its channels, a channel, a member. */
function readGuild(world: World, path: string): unknown {
  const guild = guildCreate(world);
  if (path === `/guilds/${world.guildId}`) return guild;
  if (path === `/guilds/${world.guildId}/channels`) return channels(world);
  const channel = /^\/channels\/(\d+)$/.exec(path);
  if (channel) return channels(world).find((c) => c.id === channel[1]);
  const one = new RegExp(`^/guilds/${world.guildId}/members/(\\d+)$`).exec(path);
  if (one) return (guild.members as { user: { id: string } }[]).find((m) => m.user.id === one[1]);
  return undefined;
}

function message(ctx: RestContext, channelId: string, body: unknown): Record<string, unknown> {
  const data = (body as { data?: Record<string, unknown> }).data ?? (body as Record<string, unknown>);
  return {
    id: ctx.nextId(),
    channel_id: channelId,
    type: 0,
    content: typeof data.content === "string" ? data.content : "",
    author: ctx.user,
    attachments: [],
    embeds: [],
    mentions: [],
    mention_roles: [],
    pinned: false,
    mention_everyone: false,
    tts: false,
    timestamp: new Date().toISOString(),
    edited_timestamp: null,
    flags: 0,
    components: [],
  };
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
