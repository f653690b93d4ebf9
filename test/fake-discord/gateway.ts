// Discord's gateway v10 as discord.js 14 speaks it (JSON encoding, no compression): Hello (10), Identify (2)
// → READY then GUILD_CREATE with a voice and a text channel, the members and their voice states; heartbeats
// (1 → 11); op 4 voice state updates answered with VOICE_STATE_UPDATE + VOICE_SERVER_UPDATE; a bad token
// closes 4004, privileged intents the application lacks close 4014. Tests drive it: interactions (slash
// commands as a member would send them) and members entering or leaving voice channels.

import { randomBytes } from "node:crypto";
import { type WebSocket, WebSocketServer } from "ws";
import { channels, guildCreate, member, user, voiceState, type World } from "./guild.ts";
import { Waiters } from "./waiters.ts";

export type { World } from "./guild.ts";

/** Privileged intents: GuildMembers, GuildPresences, MessageContent. */
const PRIVILEGED = (1 << 1) | (1 << 8) | (1 << 15);
export const GUILD_VOICE_STATES = 1 << 7;
const HEARTBEAT_INTERVAL = 41_250;

export interface GatewayHooks {
  /** The bot asked to join (channel id) or leave (null) voice in a guild: returns the endpoint and token to grant. */
  botVoice(
    world: World,
    channelId: string | null,
    sessionId: string,
  ): { endpoint: string; token: string } | undefined;
}

export interface GatewayRecord {
  dir: "in" | "out";
  op: number;
  t?: string;
  d: unknown;
}

/** One gateway session: a shard's connection, kept after a drop so it can be resumed. */
interface Session {
  id: string;
  shard: [number, number];
  ws: WebSocket | undefined;
  seq: number;
  ready: boolean;
  intents: number;
}

export class FakeGateway {
  readonly wss = new WebSocketServer({ noServer: true });
  /** The first guild: the token, bot user and application are the same in all of them. */
  readonly #world: World;
  /** Every guild the bot is in (the first one, then those added). */
  readonly #worlds: World[];
  readonly #hooks: GatewayHooks;
  readonly #sessions = new Map<string, Session>();
  readonly records: GatewayRecord[] = [];
  /** Identify payloads received, for asserting intents, shards and properties. */
  readonly identifies: Record<string, unknown>[] = [];
  readonly #waiters = new Waiters();

  constructor(world: World, hooks: GatewayHooks) {
    this.#world = world;
    this.#worlds = [world];
    this.#hooks = hooks;
    this.wss.on("connection", (ws, req) => this.#connection(ws, req.url ?? ""));
  }

  /** Whether the last Identify left out GUILD_VOICE_STATES (Discord accepts it; voice then never works). */
  get identifiedWithoutVoiceStates(): boolean {
    const last = this.identifies.at(-1);
    return last !== undefined && (Number(last.intents) & GUILD_VOICE_STATES) === 0;
  }

  /** Another guild the bot is in; a shard that owns it and connects later gets its GUILD_CREATE. */
  addGuild(world: World): void {
    this.#worlds.push(world);
    const owner = this.#ownerOf(world);
    if (owner) this.#dispatch(owner, "GUILD_CREATE", guildCreate(world));
  }

  /** The live session whose shard owns the first guild. */
  get #owner(): Session | undefined {
    return this.#ownerOf(this.#world);
  }

  /** The live session whose shard owns a guild ((guild_id >> 22) % shard count), once READY. */
  #ownerOf(world: World): Session | undefined {
    for (const session of this.#sessions.values()) {
      if (session.ws && session.ready && ownsGuild(session.shard, world.guildId)) return session;
    }
    return undefined;
  }

  /** Whether a session that owns the guild is connected and past READY. */
  get ready(): boolean {
    return this.#owner !== undefined;
  }

  /** The id of that session ("" if none). */
  get sessionId(): string {
    return this.#owner?.id ?? "";
  }

  /** Resolves once `test()` holds, re-checked on every gateway event. */
  waitFor(test: () => boolean): Promise<void> {
    return this.#waiters.waitFor(test);
  }

  #changed(): void {
    this.#waiters.changed();
  }

  #connection(ws: WebSocket, url: string): void {
    const params = new URL(url, "ws://127.0.0.1").searchParams;
    if (params.get("v") !== "10" || (params.get("encoding") ?? "json") !== "json" || params.has("compress")) {
      ws.close(4012, "Invalid API version");
      return;
    }
    let session: Session | undefined;
    ws.on("message", (data) => {
      let packet: { op: number; d: Record<string, unknown> | null };
      try {
        packet = JSON.parse(String(data)) as typeof packet;
      } catch {
        ws.close(4002, "Decode error");
        return;
      }
      this.records.push({ dir: "in", op: packet.op, d: packet.d });
      session = this.#packet(ws, session, packet) ?? session;
      this.#changed();
    });
    ws.on("close", () => {
      if (session && session.ws === ws) {
        session.ws = undefined;
        session.ready = false;
        this.#changed();
      }
    });
    this.#sendTo(ws, { op: 10, d: { heartbeat_interval: HEARTBEAT_INTERVAL } });
  }

  /** Handles one packet; returns the session the connection now belongs to, if it changed. */
  #packet(
    ws: WebSocket,
    session: Session | undefined,
    packet: { op: number; d: Record<string, unknown> | null },
  ): Session | undefined {
    const d = packet.d ?? {};
    if (packet.op === 1) {
      this.#sendTo(ws, { op: 11, d: null });
    } else if (packet.op === 2) {
      return this.#identify(ws, d);
    } else if (packet.op === 6) {
      return this.#resume(ws, d);
    } else if (packet.op === 4 && session?.ready) {
      this.#voiceStateUpdate(session, d);
    }
    return undefined;
  }

  #identify(ws: WebSocket, d: Record<string, unknown>): Session | undefined {
    this.identifies.push(d);
    if (d.token !== this.#world.token) {
      ws.close(4004, "Authentication failed");
      return undefined;
    }
    const intents = Number(d.intents);
    if (!Number.isInteger(intents)) {
      ws.close(4013, "Invalid intent(s)");
      return undefined;
    }
    if ((intents & PRIVILEGED & ~this.#world.allowedPrivilegedIntents) !== 0) {
      ws.close(4014, "Disallowed intent(s)");
      return undefined;
    }
    const shard = parseShard(d.shard);
    if (!shard) {
      ws.close(4010, "Invalid shard");
      return undefined;
    }
    const session: Session = {
      id: randomBytes(16).toString("hex"),
      shard,
      ws,
      seq: 0,
      ready: false,
      intents,
    };
    this.#sessions.set(session.id, session);
    const owned = this.#worlds.filter((w) => ownsGuild(shard, w.guildId));
    this.#dispatch(session, "READY", {
      v: 10,
      user: user(this.#world.user.id, this.#world.user.username, true),
      guilds: owned.map((w) => ({ id: w.guildId, unavailable: true })),
      session_id: session.id,
      resume_gateway_url: this.#world.gatewayUrl(),
      shard,
      application: { id: this.#world.applicationId, flags: 0 },
      private_channels: [],
      relationships: [],
      user_settings: {},
      presences: [],
      guild_join_requests: [],
      geo_ordered_rtc_regions: [],
    });
    for (const w of owned) this.#dispatch(session, "GUILD_CREATE", guildCreate(w));
    session.ready = true;
    return session;
  }

  /** Resume: nothing was missed on loopback, so nothing is replayed. */
  #resume(ws: WebSocket, d: Record<string, unknown>): Session | undefined {
    if (d.token !== this.#world.token) {
      ws.close(4004, "Authentication failed");
      return undefined;
    }
    const session = typeof d.session_id === "string" ? this.#sessions.get(d.session_id) : undefined;
    if (!session) {
      this.#sendTo(ws, { op: 9, d: false });
      return undefined;
    }
    session.ws?.close(4009, "Session timed out");
    session.ws = ws;
    this.#dispatch(session, "RESUMED", {});
    session.ready = true;
    return session;
  }

  #voiceStateUpdate(session: Session, d: Record<string, unknown>): void {
    const world = this.#worlds.find((w) => w.guildId === d.guild_id);
    if (!world) return;
    const channelId = typeof d.channel_id === "string" ? d.channel_id : null;
    if (channelId !== null && channelId !== world.voiceChannelId) return;
    if (channelId) world.voiceChannels.set(world.user.id, channelId);
    else world.voiceChannels.delete(world.user.id);
    const grant = this.#hooks.botVoice(world, channelId, session.id);
    // Without GUILD_VOICE_STATES Discord sends no voice states, the bot's own included: it never connects.
    if (session.intents & GUILD_VOICE_STATES)
      this.#dispatch(session, "VOICE_STATE_UPDATE", {
        ...voiceState(world.user.id, channelId, session.id),
        guild_id: world.guildId,
        member: member(world.user.id, world.user.username, true),
        self_mute: Boolean(d.self_mute),
        self_deaf: Boolean(d.self_deaf),
      });
    if (grant)
      this.#dispatch(session, "VOICE_SERVER_UPDATE", {
        token: grant.token,
        guild_id: world.guildId,
        endpoint: grant.endpoint,
      });
  }

  /** A member joined the guild. */
  memberAdded(userId: string, world = this.#world): void {
    const who = world.members.find((m) => m.userId === userId);
    if (!who) throw new Error(`no member ${userId} in the fake guild`);
    this.#dispatchToOwner(world, "GUILD_MEMBER_ADD", {
      ...member(userId, who.name, false),
      guild_id: world.guildId,
    });
  }

  /** A member's voice state changed (joined a channel, or left with null). */
  memberVoice(userId: string, channelId: string | null, world = this.#world): void {
    const who = world.members.find((m) => m.userId === userId);
    if (!who) throw new Error(`no member ${userId} in the fake guild`);
    this.#dispatchToOwner(
      world,
      "VOICE_STATE_UPDATE",
      {
        ...voiceState(userId, channelId, `member-${userId}`),
        guild_id: world.guildId,
        member: member(userId, who.name, false),
      },
      GUILD_VOICE_STATES,
    );
  }

  /** Sends INTERACTION_CREATE for a chat-input command; returns the interaction's id and token. */
  interaction(
    name: string,
    from: { userId: string; channelId: string; options?: { name: string; type: number; value: unknown }[] },
    world = this.#world,
  ): { id: string; token: string } {
    const who = world.members.find((m) => m.userId === from.userId);
    if (!who) throw new Error(`no member ${from.userId} in the fake guild`);
    const id = nextSnowflake();
    const token = `interaction-${randomBytes(12).toString("hex")}`;
    const channel = channels(world).find((c) => c.id === from.channelId);
    this.#dispatchToOwner(world, "INTERACTION_CREATE", {
      id,
      application_id: this.#world.applicationId,
      type: 2,
      data: {
        id: nextSnowflake(),
        name,
        type: 1,
        options: from.options ?? [],
        guild_id: world.guildId,
      },
      guild_id: world.guildId,
      channel_id: from.channelId,
      channel,
      member: { ...member(from.userId, who.name, false), permissions: "2251799813685247" },
      token,
      version: 1,
      app_permissions: "2251799813685247",
      locale: "en-US",
      guild_locale: "en-US",
      entitlements: [],
      authorizing_integration_owners: { "0": world.guildId },
      context: 0,
      attachment_size_limit: 10_485_760,
    });
    return { id, token };
  }

  /** Opcode 7 Reconnect to the guild owner's connection: the client reconnects and resumes. */
  reconnect(): void {
    const owner = this.#owner;
    if (owner?.ws) this.#sendTo(owner.ws, { op: 7, d: null });
  }

  /**
   * Opcode 9 Invalid Session to the guild owner's connection. Not resumable: the session is forgotten,
   * so the client must identify again (a new session id, READY and GUILD_CREATE once more).
   */
  invalidSession(resumable: boolean): void {
    const owner = this.#owner;
    if (!owner?.ws) return;
    if (!resumable) this.#sessions.delete(owner.id);
    this.#sendTo(owner.ws, { op: 9, d: resumable });
  }

  /** VOICE_SERVER_UPDATE to the guild owner: the bot's voice session moves (a new token, maybe endpoint). */
  voiceServerUpdate(grant: { token: string; endpoint: string }, world = this.#world): void {
    this.#dispatchToOwner(world, "VOICE_SERVER_UPDATE", {
      token: grant.token,
      guild_id: world.guildId,
      endpoint: grant.endpoint,
    });
  }

  /** Closes the guild owner's gateway connection with a close code (e.g. 4000 to make it resume). */
  closeWith(code: number): void {
    this.#owner?.ws?.close(code);
  }

  /**
   * Guild events go to the shard that owns the guild, if it asked for the event's intent (dropped while no
   * such shard is connected).
   */
  #dispatchToOwner(world: World, t: string, d: unknown, intent?: number): void {
    const owner = this.#ownerOf(world);
    if (owner && (intent === undefined || (owner.intents & intent) !== 0)) this.#dispatch(owner, t, d);
  }

  #dispatch(session: Session, t: string, d: unknown): void {
    if (session.ws) this.#sendTo(session.ws, { op: 0, t, s: ++session.seq, d });
  }

  #sendTo(ws: WebSocket, packet: { op: number; d: unknown; t?: string; s?: number }): void {
    if (ws.readyState !== ws.OPEN) return;
    this.records.push({ dir: "out", op: packet.op, ...(packet.t ? { t: packet.t } : {}), d: packet.d });
    ws.send(JSON.stringify({ t: null, s: null, ...packet }));
  }

  close(): void {
    for (const client of this.wss.clients) client.terminate();
    this.wss.close();
  }
}

/** Identify's `shard` ([id, count], default [0, 1]); undefined when it is not a valid pair. */
function parseShard(value: unknown): [number, number] | undefined {
  if (value === undefined) return [0, 1];
  if (!Array.isArray(value) || value.length !== 2) return undefined;
  const [id, count] = value as unknown[];
  if (!Number.isInteger(id) || !Number.isInteger(count)) return undefined;
  if ((count as number) < 1 || (id as number) < 0 || (id as number) >= (count as number)) return undefined;
  return [id as number, count as number];
}

function ownsGuild([id, count]: [number, number], guildId: string): boolean {
  return Number((BigInt(guildId) >> 22n) % BigInt(count)) === id;
}

let snowflake = 1_300_000_000_000_000_000n;
/** Unique, increasing snowflake-shaped ids for objects the fake makes. */
export function nextSnowflake(): string {
  snowflake += 1n;
  return snowflake.toString();
}
