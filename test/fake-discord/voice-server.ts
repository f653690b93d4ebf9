// The fake voice server: the voice gateway (v8, over TLS) and its UDP side, as Discord runs them
// for one bot connection per guild. It follows the published protocol: Hello, Identify → Ready,
// IP discovery, Select Protocol → Session Description, heartbeats, Speaking (what maps SSRC →
// user for the bot's receiver), clients connecting and leaving, and DAVE as the external sender,
// with simulated members as the other group members. Close codes are test controls.
import { randomBytes, randomInt } from "node:crypto";
import { createSocket, type RemoteInfo, type Socket } from "node:dgram";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";
import { DaveExternalSender, proposalsPayload, splitCommitWelcome } from "./dave-sender.ts";
import type { SimMember } from "./member.ts";
import type { TestCertificate } from "./tls.ts";
import { openRtp, sealRtp, TRANSPORT_MODE } from "./transport-crypto.ts";

const OP = {
  identify: 0,
  selectProtocol: 1,
  ready: 2,
  heartbeat: 3,
  sessionDescription: 4,
  speaking: 5,
  heartbeatAck: 6,
  resume: 7,
  hello: 8,
  resumed: 9,
  clientsConnect: 11,
  clientDisconnect: 13,
  davePrepareTransition: 21,
  daveExecuteTransition: 22,
  daveTransitionReady: 23,
  daveExternalSender: 25,
  daveKeyPackage: 26,
  daveProposals: 27,
  daveCommitWelcome: 28,
  daveAnnounceCommit: 29,
} as const;

/** What the gateway told the bot to connect with, for one guild. */
export interface VoiceGrant {
  guildId: string;
  channelId: string;
  userId: string;
  sessionId: string;
  token: string;
}

/** One bot connection (a guild's voice channel) on the fake voice server. */
export class VoiceConnection {
  readonly grant: VoiceGrant;
  readonly ssrc = randomInt(1, 2 ** 31);
  readonly secretKey = randomBytes(32);
  readonly members = new Map<string, SimMember>();
  /** The DAVE protocol version in use (0: the bot asked for none). */
  daveVersion = 0;
  /** Privacy-code check: true once the bot and every member agree on the group's epoch. */
  transitions = 0;
  /** Packets from the bot that did not authenticate. */
  badPackets = 0;
  /** Opus packets (DAVE frames) received from the bot. */
  botPackets = 0;
  ws: WebSocket | undefined;
  udpRemote: RemoteInfo | undefined;
  #server: FakeVoiceServer;
  #seq = 0;
  #counter = 0;
  #ready = false;
  #epoch = 0n;
  #transitionId = 0;
  /** Members waiting for the bot's commit that adds them, and those already in the group. */
  #joining: SimMember[] = [];
  #inGroup = new Set<SimMember>();
  #keyPackageSeen = false;
  #pendingLeaves: SimMember[] = [];
  #proposing = false;

  constructor(server: FakeVoiceServer, grant: VoiceGrant) {
    this.#server = server;
    this.grant = grant;
  }

  get ready(): boolean {
    return this.#ready;
  }

  /** Every member in the DAVE group with the bot (or DAVE off): audio flows end to end. */
  get settled(): boolean {
    if (!this.#ready) return false;
    if (this.daveVersion === 0) return true;
    return this.#joining.length === 0 && [...this.members.values()].every((m) => this.#inGroup.has(m));
  }

  send(op: number, d: unknown): void {
    this.ws?.send(JSON.stringify({ op, d, ...(op >= 21 ? { seq: ++this.#seq } : {}) }));
  }

  sendBinary(op: number, payload: Uint8Array): void {
    const out = Buffer.alloc(3 + payload.length);
    out.writeUInt16BE(++this.#seq & 0xffff, 0);
    out[2] = op;
    out.set(payload, 3);
    this.ws?.send(out);
  }

  /** A member enters the channel (before or after the bot). */
  addMember(member: SimMember): void {
    this.members.set(member.userId, member);
    member.link = {
      sendOpus: (m, payload) => this.#sendFor(m, payload),
      speaking: (m, on) => this.send(OP.speaking, { user_id: m.userId, ssrc: m.ssrc, speaking: on ? 1 : 0 }),
    };
    if (!this.#ready) return;
    this.send(OP.clientsConnect, { user_ids: [member.userId] });
    this.send(OP.speaking, { user_id: member.userId, ssrc: member.ssrc, speaking: 0 });
    if (this.daveVersion > 0) {
      this.#joining.push(member);
      void this.#propose();
    }
  }

  /** A member leaves the channel. */
  removeMember(member: SimMember): void {
    if (!this.members.delete(member.userId)) return;
    member.link = undefined;
    this.send(OP.clientDisconnect, { user_id: member.userId });
    if (this.daveVersion > 0 && this.#inGroup.has(member)) {
      this.#pendingLeaves.push(member);
      void this.#propose();
    }
  }

  /** Closes the voice WebSocket with a close code (4014 disconnected, 4015 server crashed...). */
  close(code: number): void {
    this.ws?.close(code);
  }

  onMessage(data: Buffer, isBinary: boolean): void {
    if (isBinary) {
      const op = data[0]!;
      const payload = data.subarray(1);
      if (op === OP.daveKeyPackage) void this.#onKeyPackage();
      else if (op === OP.daveCommitWelcome) this.#onCommitWelcome(payload);
      return;
    }
    const msg = JSON.parse(data.toString()) as { op: number; d: Record<string, unknown> };
    const d = msg.d;
    switch (msg.op) {
      case OP.identify: {
        if (d.token !== this.grant.token || d.session_id !== this.grant.sessionId) {
          this.ws?.close(4004, "Authentication failed");
          return;
        }
        this.daveVersion = Number(d.max_dave_protocol_version ?? 0) > 0 ? 1 : 0;
        this.send(OP.ready, {
          ssrc: this.ssrc,
          ip: "127.0.0.1",
          port: this.#server.udpPort,
          modes: [TRANSPORT_MODE],
          heartbeat_interval: 1,
        });
        return;
      }
      case OP.resume:
        this.send(OP.resumed, null);
        return;
      case OP.heartbeat:
        this.send(OP.heartbeatAck, { t: (d as { t?: number }).t ?? d });
        return;
      case OP.selectProtocol: {
        const mode = (d.data as { mode?: string } | undefined)?.mode;
        if (mode !== TRANSPORT_MODE) {
          this.ws?.close(4016, "Unknown encryption mode");
          return;
        }
        this.send(OP.sessionDescription, {
          mode,
          secret_key: [...this.secretKey],
          dave_protocol_version: this.daveVersion,
        });
        this.#ready = true;
        const ids = [...this.members.keys()];
        if (ids.length) this.send(OP.clientsConnect, { user_ids: ids });
        for (const m of this.members.values())
          this.send(OP.speaking, { user_id: m.userId, ssrc: m.ssrc, speaking: 0 });
        if (this.daveVersion > 0) this.#joining.push(...this.members.values());
        return;
      }
      case OP.daveTransitionReady: {
        const id = Number(d.transition_id);
        this.send(OP.daveExecuteTransition, { transition_id: id });
        this.transitions++;
        return;
      }
      default:
        return;
    }
  }

  /** The bot's key package: it may now be sent the external sender and proposals. */
  async #onKeyPackage(): Promise<void> {
    if (this.#keyPackageSeen) return;
    this.#keyPackageSeen = true;
    const sender = await this.#server.externalSender();
    this.sendBinary(OP.daveExternalSender, sender.packageBytes);
    for (const m of this.members.values()) {
      try {
        m.dave.setExternalSender(Buffer.from(sender.packageBytes));
      } catch {
        // Already set for this member.
      }
    }
    await this.#propose();
  }

  /** Proposes what is waiting (joins, then leaves), one op 27 at a time, each committed by the bot. */
  async #propose(): Promise<void> {
    if (this.#proposing || !this.#keyPackageSeen) return;
    const sender = await this.#server.externalSender();
    const channel = this.grant.channelId;
    if (this.#joining.length) {
      this.#proposing = true;
      const messages: Uint8Array[] = [];
      for (const m of this.#joining) {
        try {
          m.dave.setExternalSender(Buffer.from(sender.packageBytes));
        } catch {
          // Already set.
        }
        messages.push(await sender.proposeAdd(channel, this.#epoch, m.dave.getSerializedKeyPackage()));
      }
      this.#sendProposals(proposalsPayload(messages));
      return;
    }
    const leaving = this.#pendingLeaves.shift();
    if (leaving) {
      const leaf = leaving.dave.ownLeafIndex;
      this.#inGroup.delete(leaving);
      if (leaf === null) return;
      this.#proposing = true;
      this.#sendProposals(proposalsPayload([await sender.proposeRemove(channel, this.#epoch, leaf)]));
    }
  }

  /**
   * Proposals go to every group member, as Discord sends them: members keep them, so that the
   * commit the bot makes (which names them by reference) can be processed; their own commits are
   * dropped, the bot's being the one announced.
   */
  #sendProposals(payload: Uint8Array): void {
    this.sendBinary(OP.daveProposals, payload);
    const ids = [this.grant.userId, ...this.members.keys()];
    for (const m of this.#inGroup) {
      try {
        m.dave.processProposals(0 as never, Buffer.from(payload.subarray(1)), ids);
      } catch {
        this.#inGroup.delete(m);
      }
    }
  }

  #onCommitWelcome(payload: Buffer): void {
    const { commit, welcome } = splitCommitWelcome(payload);
    const id = ++this.#transitionId;
    const announce = Buffer.alloc(2 + commit.length);
    announce.writeUInt16BE(id, 0);
    announce.set(commit, 2);
    this.sendBinary(OP.daveAnnounceCommit, announce);
    for (const m of this.#inGroup) {
      try {
        m.dave.processCommit(Buffer.from(commit));
      } catch {
        this.#inGroup.delete(m);
      }
    }
    const joined = this.#joining;
    this.#joining = [];
    if (welcome) {
      for (const m of joined) {
        if (!this.members.has(m.userId)) continue;
        m.dave.processWelcome(Buffer.from(welcome));
        this.#inGroup.add(m);
      }
    }
    this.#epoch += 1n;
    this.#proposing = false;
    void this.#propose();
  }

  #sendFor(member: SimMember, payload: Uint8Array): void {
    const remote = this.udpRemote;
    if (!remote || !this.#ready) return;
    this.#counter = (this.#counter + 1) >>> 0;
    const packet = sealRtp(this.secretKey, member.nextRtp(), payload, this.#counter);
    this.#server.udp.send(packet, remote.port, remote.address);
  }

  onRtp(packet: Buffer): void {
    const opened = openRtp(this.secretKey, packet);
    if (!opened) {
      this.badPackets++;
      return;
    }
    this.botPackets++;
    for (const m of this.members.values()) m.hear(this.grant.userId, opened.payload);
  }
}

export class FakeVoiceServer {
  readonly https: Server;
  readonly udp: Socket;
  readonly wss: WebSocketServer;
  readonly connections: VoiceConnection[] = [];
  readonly #grants = new Map<string, VoiceGrant>();
  /** Members sitting in each guild's voice channel, whether or not the bot is there. */
  readonly #present = new Map<string, SimMember[]>();
  #sender: Promise<DaveExternalSender> | undefined;
  port = 0;
  udpPort = 0;

  constructor(cert: TestCertificate) {
    this.https = createServer({ key: cert.key, cert: cert.cert });
    this.wss = new WebSocketServer({ server: this.https });
    this.udp = createSocket("udp4");
    this.wss.on("connection", (ws) => this.#accept(ws));
    this.udp.on("message", (msg, rinfo) => this.#onUdp(msg, rinfo));
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.https.listen(0, "127.0.0.1", resolve));
    this.port = (this.https.address() as AddressInfo).port;
    await new Promise<void>((resolve) => this.udp.bind(0, "127.0.0.1", resolve));
    this.udpPort = this.udp.address().port;
  }

  externalSender(): Promise<DaveExternalSender> {
    this.#sender ??= DaveExternalSender.create();
    return this.#sender;
  }

  /** The gateway granted a voice connection (VOICE_SERVER_UPDATE with this token). */
  grant(g: VoiceGrant): void {
    this.#grants.set(g.token, g);
  }

  /** A member in a guild's voice channel before the bot connects: it meets the bot when it does. */
  waiting(guildId: string, member: SimMember): void {
    const list = this.#present.get(guildId) ?? [];
    list.push(member);
    this.#present.set(guildId, list);
  }

  /** A member left a guild's voice channel. */
  left(guildId: string, member: SimMember): void {
    const list = this.#present.get(guildId)?.filter((m) => m !== member) ?? [];
    this.#present.set(guildId, list);
    this.connectionFor(guildId)?.removeMember(member);
  }

  connectionFor(guildId: string): VoiceConnection | undefined {
    return this.connections.findLast((c) => c.grant.guildId === guildId && c.ws?.readyState === 1);
  }

  #accept(ws: WebSocket): void {
    let conn: VoiceConnection | undefined;
    ws.send(JSON.stringify({ op: OP.hello, d: { v: 8, heartbeat_interval: 13_750 } }));
    ws.on("message", (data: Buffer, isBinary: boolean) => {
      if (!conn && !isBinary) {
        const msg = JSON.parse(data.toString()) as { op: number; d: { token?: string; session_id?: string } };
        if (msg.op === OP.identify || msg.op === OP.resume) {
          const grant = this.#grants.get(msg.d.token ?? "");
          if (!grant) {
            ws.close(4004, "Authentication failed");
            return;
          }
          const previous = this.connections.findLast((c) => c.grant.sessionId === grant.sessionId);
          if (msg.op === OP.resume && previous) {
            conn = previous;
          } else {
            conn = new VoiceConnection(this, grant);
            this.connections.push(conn);
            for (const m of this.#present.get(grant.guildId) ?? []) conn.addMember(m);
          }
          conn.ws = ws;
        }
      }
      try {
        conn?.onMessage(data, isBinary);
      } catch (err) {
        process.stderr.write(`fake voice server: ${(err as Error).stack}\n`);
      }
    });
  }

  #onUdp(msg: Buffer, rinfo: RemoteInfo): void {
    if (msg.length === 74 && msg.readUInt16BE(0) === 1) {
      const ssrc = msg.readUInt32BE(4);
      const conn = this.connections.findLast((c) => c.ssrc === ssrc);
      if (!conn) return;
      conn.udpRemote = rinfo;
      const reply = Buffer.alloc(74);
      reply.writeUInt16BE(2, 0);
      reply.writeUInt16BE(70, 2);
      reply.writeUInt32BE(ssrc, 4);
      reply.write(rinfo.address, 8, "utf8");
      reply.writeUInt16BE(rinfo.port, 72);
      this.udp.send(reply, rinfo.port, rinfo.address);
      return;
    }
    if (msg.length <= 8) return; // keep-alive
    const ssrc = msg.readUInt32BE(8);
    this.connections.findLast((c) => c.ssrc === ssrc)?.onRtp(msg);
  }

  async close(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    await new Promise((resolve) => this.wss.close(resolve));
    await new Promise((resolve) => this.https.close(resolve));
    this.udp.close();
  }
}
