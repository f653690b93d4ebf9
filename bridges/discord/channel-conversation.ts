// One voice channel's conversation: the voice connection, one receiver per member who speaks, the
// agent's player, and the transport the session talks to. It ends once (left by command or by the
// agent, emptied of humans, connection lost) and leaves the channel behind it.
import { entersState, joinVoiceChannel, type VoiceConnection, VoiceConnectionStatus } from "@discordjs/voice";
import type { Client, VoiceBasedChannel } from "discord.js";
import type { Clock } from "../../src/core/clock.ts";
import type { Logger } from "../../src/core/log.ts";
import type { CallTransport, Speaker } from "../transport.ts";
import { describeE2ee, E2eeWatch, maySpeak, privacyCodeOf } from "./e2ee.ts";
import { DISCORD_INPUT_RATE, MemberReceiver } from "./member-receiver.ts";
import { MemberSilence } from "./member-silence.ts";
import { sendOpusPacket } from "./packet-out.ts";
import { ReceiveInbox } from "./receive-inbox.ts";
import { routeReceivedAudio } from "./receive-router.ts";
import { DiscordChannelTransport } from "./transport.ts";
import { tuneVoiceUdp, type VoiceUdpReads } from "./voice-udp.ts";

/** How long a voice connection may take to be ready (DAVE and UDP discovery included). */
const READY_TIMEOUT_MS = 20_000;
/**
 * How long the DAVE group may take to be ready once the connection is (members answer a key package
 * in hundreds of ms; a transition is given about 2 s), and how long a later rebuild may hold the
 * agent's voice, before the conversation ends rather than speak unencrypted.
 */
const DAVE_READY_TIMEOUT_MS = 10_000;
/** How long a disconnected connection may take to start reconnecting before it is given up. */
const RECONNECT_GRACE_MS = 5_000;
/** Consecutive DAVE decryption failures tolerated before the library rebuilds its DAVE session. */
const DECRYPTION_FAILURE_TOLERANCE = 200;

export interface ConversationSettings {
  respondTo: "all" | "mention";
  agentName: string;
}

export interface ChannelConversationOptions {
  client: Client<true>;
  channel: VoiceBasedChannel;
  /** Which conversation this is in the channel since start (1, 2, …): part of the call id. */
  n: number;
  log: Logger;
  clock: Clock;
  settings: ConversationSettings;
  /** Overrides DAVE_READY_TIMEOUT_MS (tests). */
  daveReadyTimeoutMs?: number;
  onConversation(transport: CallTransport): void;
  /** The conversation ended (after the session was told and the channel left). */
  onEnded(conversation: ChannelConversation): void;
}

export class ChannelConversation {
  readonly channel: VoiceBasedChannel;
  readonly callId: string;
  readonly #opts: ChannelConversationOptions;
  readonly #log: Logger;
  readonly #receivers = new Map<string, MemberReceiver>();
  /** Users whose packets are dropped: bots (the bridge included). */
  readonly #ignored = new Set<string>();
  #undecryptable = 0;
  readonly #silence: MemberSilence;
  /** Members' packets until the voice clock's next tick (every channel's decoded together). */
  readonly #inbox = new ReceiveInbox();
  #udp: VoiceUdpReads | undefined;
  #connection: VoiceConnection | undefined;
  #transport: DiscordChannelTransport | undefined;
  #ended = false;

  constructor(opts: ChannelConversationOptions) {
    this.#opts = opts;
    this.channel = opts.channel;
    this.callId = `discord-${opts.channel.guild.id}-${opts.channel.id}-${opts.n}`;
    this.#log = opts.log.child({ callId: this.callId });
    this.#silence = new MemberSilence({
      clock: opts.clock,
      frameSamples: DISCORD_INPUT_RATE / 50,
      onFrame: (frame, who) => this.#transport?.frame(frame, who),
    });
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Joins the channel; resolves once the voice connection is ready and the session has the transport. */
  async start(): Promise<void> {
    const { channel } = this;
    this.#log.info({ guild: channel.guild.name, channel: channel.name }, "joining voice channel");
    const connection = joinVoiceChannel({
      channelId: channel.id,
      guildId: channel.guild.id,
      adapterCreator: channel.guild.voiceAdapterCreator,
      selfDeaf: false,
      selfMute: false,
      decryptionFailureTolerance: DECRYPTION_FAILURE_TOLERANCE,
    });
    this.#connection = connection;
    // The inbox is decoded right after each tick's reading, not a tick later.
    this.#udp = tuneVoiceUdp(connection, () => this.#inbox.flush());
    // Before the first UDP socket exists, so that every socket of the connection routes here.
    routeReceivedAudio(connection.receiver, {
      packet: (userId, opus) => {
        this.#udp?.packetRead();
        this.#heard(userId, opus);
      },
      undecryptable: (userId, err) => {
        this.#undecryptable++;
        if (this.#undecryptable === 1 || this.#undecryptable % 500 === 0)
          this.#log.warn(
            { userId, err: err.message, undecryptable: this.#undecryptable },
            "a member's packet could not be decrypted",
          );
      },
    });
    connection.on("error", (err) => this.#log.warn({ err }, "voice connection error"));
    connection.on("stateChange", (from, to) => {
      if (from.status !== to.status)
        this.#log.debug({ from: from.status, to: to.status }, "voice connection");
    });
    const joinedAt = this.#opts.clock.now();
    const daveTimeout = this.#opts.daveReadyTimeoutMs ?? DAVE_READY_TIMEOUT_MS;
    const e2ee = new E2eeWatch(connection, {
      log: this.#log,
      clock: this.#opts.clock,
      holdLimitMs: daveTimeout,
      onHoldTooLong: (line) => {
        this.#log.error(line);
        this.#end("DAVE group not ready: nothing said unencrypted");
      },
    });
    try {
      await entersState(connection, VoiceConnectionStatus.Ready, READY_TIMEOUT_MS);
    } catch (err) {
      this.#fail(connection);
      throw new Error(
        `the voice connection to "${channel.name}" did not become ready within ${READY_TIMEOUT_MS / 1000} s (${(err as Error).message})`,
      );
    }
    // Ready comes with the Session Description, before the DAVE group exists: until then the
    // library would send the greeting in clear, and members drop unencrypted media.
    let secured: Awaited<ReturnType<E2eeWatch["whenSpeakable"]>>;
    try {
      secured = await e2ee.whenSpeakable(daveTimeout);
    } catch (err) {
      const humans = this.humans().length;
      this.#log.error(
        { channel: channel.name, humans, waitedMs: Math.round(this.#opts.clock.now() - joinedAt) },
        `DAVE did not come up (${(err as Error).message}${humans === 0 ? "; nobody else is in the channel to build the group with" : ""}): leaving the channel rather than speak unencrypted`,
      );
      this.#fail(connection);
      throw new Error(
        `end-to-end encryption (DAVE) did not come up in "${channel.name}" within ${daveTimeout / 1000} s`,
      );
    }
    if (this.#ended) throw new Error(`the conversation in "${channel.name}" ended while it started`);
    connection.on(VoiceConnectionStatus.Disconnected, () => void this.#onDisconnected(connection));
    connection.on(VoiceConnectionStatus.Destroyed, () => this.#end("voice connection closed"));

    const transport = new DiscordChannelTransport({
      info: {
        callId: this.callId,
        transport: "discord",
        params: {
          guildId: channel.guild.id,
          guildName: channel.guild.name,
          channelId: channel.id,
          channelName: channel.name,
          respondTo: this.#opts.settings.respondTo,
          agentName: this.#opts.settings.agentName,
        },
      },
      log: this.#log,
      leave: async (reason) => this.leave(`agent hung up (${reason})`),
    });
    this.#transport = transport;
    transport.player.connect({
      open: () => maySpeak(e2ee.check()),
      send: (packet) => {
        sendOpusPacket(connection, packet);
      },
      speaking: (on) => {
        connection.setSpeaking(on);
      },
    });
    this.#log.info(
      {
        humans: this.humans().length,
        e2ee: describeE2ee(secured),
        dave: secured.kind === "dave",
        daveSince: e2ee.daveSince,
        privacyCode: secured.kind === "dave" ? privacyCodeOf(secured) : undefined,
        secureAfterMs: Math.round(this.#opts.clock.now() - joinedAt),
      },
      "voice connection ready and encrypted: conversation starts",
    );
    this.#opts.onConversation(transport);
  }

  #fail(connection: VoiceConnection): void {
    this.#ended = true;
    if (connection.state.status !== VoiceConnectionStatus.Destroyed) connection.destroy();
    this.#opts.onEnded(this);
  }

  /** Human members in the channel now (bots, the bridge included, do not count). */
  humans(): string[] {
    // From the voice states, not channel.members, which lists only members the cache holds.
    const out: string[] = [];
    for (const state of this.channel.guild.voiceStates.cache.values()) {
      if (state.channelId === this.channel.id && !this.#isBot(state.id)) out.push(state.id);
    }
    return out;
  }

  /** A member left the channel (or moved away): their speech is dropped, the others go on. */
  memberLeft(userId: string): void {
    if (this.#ended) return;
    // What they said before leaving is theirs: decoded now, before their receiver goes.
    this.#inbox.flush();
    const receiver = this.#receivers.get(userId);
    if (receiver) {
      receiver.stop();
      this.#receivers.delete(userId);
      this.#log.info(
        { member: receiver.speaker.name, frames: receiver.frames, badPackets: receiver.badPackets },
        "member left",
      );
    }
    this.#silence.forget(userId);
    this.#transport?.speakerLeft(userId);
    if (this.humans().length === 0) void this.leave("everyone left the channel");
  }

  /** Ends the conversation and leaves the channel. */
  async leave(reason: string): Promise<void> {
    this.#end(reason);
  }

  #end(reason: string): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#inbox.close();
    this.#udp?.close();
    for (const r of this.#receivers.values()) r.stop();
    this.#receivers.clear();
    this.#silence.close();
    this.#transport?.end(reason);
    const c = this.#connection;
    if (c && c.state.status !== VoiceConnectionStatus.Destroyed) c.destroy();
    this.#opts.onEnded(this);
  }

  /** The documented reconnect: a new voice server (Signalling) or a resumed socket (Connecting) within 5 s, else give up. */
  async #onDisconnected(connection: VoiceConnection): Promise<void> {
    const state = connection.state;
    const closeCode =
      state.status === VoiceConnectionStatus.Disconnected && "closeCode" in state
        ? state.closeCode
        : undefined;
    this.#log.warn({ closeCode }, "voice connection disconnected: waiting for it to reconnect");
    try {
      await Promise.race([
        entersState(connection, VoiceConnectionStatus.Signalling, RECONNECT_GRACE_MS),
        entersState(connection, VoiceConnectionStatus.Connecting, RECONNECT_GRACE_MS),
      ]);
      await entersState(connection, VoiceConnectionStatus.Ready, READY_TIMEOUT_MS);
      this.#log.info("voice connection back");
    } catch {
      if (this.#ended) return;
      this.#log.warn({ closeCode }, "voice connection did not come back: ending the conversation");
      this.#end(`voice connection lost${closeCode ? ` (close ${closeCode})` : ""}`);
    }
  }

  /** A member's packet: to their receiver, made on their first packet. */
  #heard(userId: string, opus: Buffer): void {
    if (this.#ended || !this.#transport) return;
    let receiver = this.#receivers.get(userId);
    if (!receiver) {
      if (this.#ignored.has(userId)) return;
      if (this.#isBot(userId)) {
        this.#ignored.add(userId);
        return;
      }
      receiver = this.#receiver(userId);
    }
    this.#inbox.push(receiver, opus);
  }

  #receiver(userId: string): MemberReceiver {
    const speaker = this.#speaker(userId);
    const r = new MemberReceiver({
      speaker,
      onFrame: (frame, who) => {
        this.#transport?.frame(frame, who);
        this.#silence.heard(who);
      },
      onBadPacket: (err) => {
        if (r.badPackets === 1 || r.badPackets % 500 === 0)
          this.#log.warn(
            { err, member: r.speaker.name, badPackets: r.badPackets },
            "undecodable Opus from member",
          );
      },
    });
    this.#receivers.set(userId, r);
    this.#log.info({ member: speaker.name, userId }, "listening to member");
    return r;
  }

  #isBot(userId: string): boolean {
    if (userId === this.#opts.client.user.id) return true;
    const user =
      this.channel.guild.members.cache.get(userId)?.user ?? this.#opts.client.users.cache.get(userId);
    return user?.bot ?? false;
  }

  #speaker(userId: string): Speaker {
    const member = this.channel.guild.members.cache.get(userId);
    if (member) return { id: userId, name: member.displayName };
    // Not cached (the gateway sent no member with their voice state): ask for it, meanwhile a placeholder.
    this.channel.guild.members.fetch(userId).then(
      (m) => {
        const r = this.#receivers.get(userId);
        if (r) r.speaker = { id: userId, name: m.displayName };
        if (m.user.bot) this.#ignore(userId);
      },
      (err: Error) => this.#log.debug({ userId, err: err.message }, "could not fetch a member's name"),
    );
    return { id: userId, name: this.#opts.client.users.cache.get(userId)?.displayName ?? `member ${userId}` };
  }

  /** A member turned out to be a bot: stop listening to it. */
  #ignore(userId: string): void {
    this.#ignored.add(userId);
    this.#receivers.get(userId)?.stop();
    this.#receivers.delete(userId);
  }
}
