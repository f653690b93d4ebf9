// The fake voice server: the v8 voice gateway over TLS (wss://127.0.0.1:PORT?v=8) plus its UDP socket, for
// one bot connection at a time. Hello (8) → Identify (0, checked against the session and token the main
// gateway handed out) → Ready (2) → UDP discovery → Select Protocol (1) → Session Description (4) with the
// DAVE version; heartbeats (3 → 6), Resume (7 → 9) after a resumable close, Speaking (5) and client
// connect/disconnect (11/13) for simulated members, and DAVE: the fake is the MLS external sender, each
// member joins the bot's group through an external Add, the bot commits, and the transition is executed.

import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer, type Server } from "node:https";
import { WebSocket, WebSocketServer } from "ws";
import { DaveExternalSender, splitCommitWelcome } from "./dave-external-sender.ts";
import type { SimulatedMember } from "./member.ts";
import type { SelfSignedCert } from "./tls-cert.ts";
import { openRtp, TRANSPORT_MODES, type TransportMode } from "./transport-crypto.ts";
import { VoiceUdpServer } from "./voice-udp.ts";

const HEARTBEAT_INTERVAL = 13_750;
const BOT_SSRC = 1001;

/** What the main gateway granted the bot in VOICE_STATE_UPDATE / VOICE_SERVER_UPDATE. */
export interface VoiceGrant {
  guildId: string;
  channelId: string;
  userId: string;
  sessionId: string;
  token: string;
}

/** A frame of the voice gateway as recorded (both directions; binary frames by opcode and size). */
export interface VoiceRecord {
  dir: "in" | "out";
  op: number;
  d?: unknown;
  bytes?: number;
}

export interface VoiceServerOptions {
  /** Offer DAVE (protocol version 1) to clients that support it. */
  dave: boolean;
  /** Encryption modes offered in Ready, in order (the client takes the first it supports). Default both. */
  modes?: readonly TransportMode[];
}

interface Call {
  grant: VoiceGrant;
  ws: WebSocket;
  secretKey: Uint8Array;
  mode: TransportMode;
  daveVersion: number;
  selected: boolean;
}

export class FakeVoiceServer {
  readonly #https: Server;
  readonly #wss: WebSocketServer;
  readonly udp: VoiceUdpServer;
  readonly #external: DaveExternalSender;
  readonly #dave: boolean;
  readonly #modes: readonly TransportMode[];
  #grant: VoiceGrant | undefined;
  #call: Call | undefined;
  #seq = 0;
  #epoch = 0n;
  #transition = 0;
  #daveQueue: Promise<void> = Promise.resolve();
  #daveStarted = false;
  #pendingCommit: ((payload: Buffer) => void) | undefined;
  #pendingReady = new Map<number, () => void>();
  /** Members of the channel the bot is in (joined to the call as soon as the bot is connected). */
  readonly #members = new Set<SimulatedMember>();
  readonly records: VoiceRecord[] = [];
  /** Opcode 5 payloads from the bot. */
  readonly botSpeaking: unknown[] = [];
  /** Bot RTP packets that failed transport decryption. */
  transportFailures = 0;
  readonly #waiters = new Set<() => void>();

  private constructor(
    https: Server,
    udp: VoiceUdpServer,
    external: DaveExternalSender,
    options: VoiceServerOptions,
  ) {
    this.#https = https;
    this.udp = udp;
    this.#external = external;
    this.#dave = options.dave;
    this.#modes = options.modes ?? TRANSPORT_MODES;
    if (this.#modes.length === 0) throw new Error("the voice server must offer at least one encryption mode");
    this.#wss = new WebSocketServer({ server: https });
    this.#wss.on("connection", (ws, req) => this.#connection(ws, req.url ?? ""));
    udp.onRtp((ssrc, packet, at) => this.#rtp(ssrc, packet, at));
  }

  static async start(cert: SelfSignedCert, options: VoiceServerOptions): Promise<FakeVoiceServer> {
    const https = createServer({ cert: cert.cert, key: cert.key });
    https.listen(0, "127.0.0.1");
    await once(https, "listening");
    const udp = await VoiceUdpServer.start();
    return new FakeVoiceServer(https, udp, await DaveExternalSender.create(), options);
  }

  /** "127.0.0.1:PORT", the endpoint VOICE_SERVER_UPDATE names. */
  get endpoint(): string {
    const address = this.#https.address();
    if (!address || typeof address === "string") throw new Error("voice server is not listening");
    return `127.0.0.1:${address.port}`;
  }

  /** The main gateway grants a voice session; the next Identify must match it. */
  grant(grant: VoiceGrant): void {
    this.#grant = grant;
  }

  /** The main gateway saw the bot leave its channel. */
  revoke(): void {
    this.#grant = undefined;
    this.#call?.ws.close(4014, "Disconnected");
    this.#endCall();
  }

  get connected(): boolean {
    return this.#call?.selected === true;
  }

  get daveProtocolVersion(): number {
    return this.#call?.daveVersion ?? 0;
  }

  /** Closes the bot's voice WebSocket with a server close code (4014 disconnected, 4015 crashed, …). */
  closeWith(code: number, reason = ""): void {
    const call = this.#call;
    if (!call) throw new Error("no bot is connected to the voice server");
    call.ws.close(code, reason);
    if (code !== 4015) this.#endCall();
  }

  /** A member enters the bot's voice channel (or is there when the bot arrives). */
  memberJoined(member: SimulatedMember): void {
    this.#members.add(member);
    if (this.#call?.selected) this.#attach(member);
  }

  memberLeft(member: SimulatedMember): void {
    if (!this.#members.delete(member)) return;
    const call = this.#call;
    member.attach(undefined);
    if (!call?.selected) return;
    this.#send({ op: 13, d: { user_id: member.userId } });
    if (call.daveVersion > 0 && member.dave?.ready) this.#queueDave(() => this.#remove(member));
    else member.stopDave();
  }

  /** Resolves when every DAVE change queued so far (adds, removes) has been committed and executed. */
  daveSettled(): Promise<void> {
    return this.#daveQueue;
  }

  /** Resolves when `test()` holds, re-checked on every voice gateway event. */
  waitFor(test: () => boolean): Promise<void> {
    if (test()) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (!test()) return;
        this.#waiters.delete(check);
        resolve();
      };
      this.#waiters.add(check);
    });
  }

  #changed(): void {
    for (const check of [...this.#waiters]) check();
  }

  #connection(ws: WebSocket, url: string): void {
    const version = new URL(url, "wss://127.0.0.1").searchParams.get("v");
    if (version !== "8") {
      ws.close(4012, "Unknown protocol");
      return;
    }
    ws.on("message", (data, isBinary) => {
      try {
        if (isBinary) this.#binary(ws, Buffer.from(data as Buffer));
        else this.#json(ws, JSON.parse(String(data)) as { op: number; d: Record<string, unknown> });
      } catch (error) {
        this.records.push({ dir: "in", op: -1, d: String(error) });
        ws.close(4001, "Unknown opcode");
      }
      this.#changed();
    });
    ws.on("close", () => {
      if (this.#call?.ws === ws) this.#changed();
    });
    this.#sendTo(ws, { op: 8, d: { v: 8, heartbeat_interval: HEARTBEAT_INTERVAL } });
  }

  #json(ws: WebSocket, packet: { op: number; d: Record<string, unknown> }): void {
    this.records.push({ dir: "in", op: packet.op, d: packet.d });
    switch (packet.op) {
      case 0:
        this.#identify(ws, packet.d);
        return;
      case 1:
        this.#selectProtocol(ws, packet.d);
        return;
      case 3:
        this.#sendTo(ws, { op: 6, d: { t: packet.d.t } });
        return;
      case 5:
        this.botSpeaking.push(packet.d);
        return;
      case 7:
        this.#resume(ws, packet.d);
        return;
      case 23:
        this.#pendingReady.get(Number(packet.d.transition_id))?.();
        return;
      case 31:
        return; // recorded above: the bot could not use a commit or welcome
      default:
        ws.close(4001, "Unknown opcode");
    }
  }

  #identify(ws: WebSocket, d: Record<string, unknown>): void {
    const grant = this.#grant;
    if (
      !grant ||
      d.session_id !== grant.sessionId ||
      d.user_id !== grant.userId ||
      d.server_id !== grant.guildId
    ) {
      ws.close(4006, "Session no longer valid");
      return;
    }
    if (d.token !== grant.token) {
      ws.close(4004, "Authentication failed");
      return;
    }
    const maxDave = typeof d.max_dave_protocol_version === "number" ? d.max_dave_protocol_version : 0;
    this.#endCall();
    this.#call = {
      grant,
      ws,
      secretKey: randomBytes(32),
      mode: this.#modes[0]!,
      daveVersion: this.#dave ? Math.min(1, maxDave) : 0,
      selected: false,
    };
    this.#sendTo(ws, {
      op: 2,
      d: {
        ssrc: BOT_SSRC,
        ip: "127.0.0.1",
        port: this.udp.port,
        modes: [...this.#modes],
        heartbeat_interval: 1,
      },
    });
  }

  #selectProtocol(ws: WebSocket, d: Record<string, unknown>): void {
    const call = this.#call;
    if (!call || call.ws !== ws) {
      ws.close(4003, "Not authenticated");
      return;
    }
    const data = d.data as { mode?: unknown } | undefined;
    const mode = this.#modes.find((m) => m === data?.mode);
    if (d.protocol !== "udp" || !mode) {
      ws.close(4016, "Unknown encryption mode");
      return;
    }
    call.mode = mode;
    this.#sendTo(ws, {
      op: 4,
      d: {
        mode,
        secret_key: [...call.secretKey],
        dave_protocol_version: call.daveVersion,
        audio_codec: "opus",
        media_session_id: randomBytes(16).toString("hex"),
      },
    });
    call.selected = true;
    for (const member of this.#members) this.#attach(member);
  }

  #resume(ws: WebSocket, d: Record<string, unknown>): void {
    const call = this.#call;
    if (!call || d.session_id !== call.grant.sessionId || d.token !== call.grant.token) {
      ws.close(4006, "Session no longer valid");
      return;
    }
    call.ws = ws;
    this.#sendTo(ws, { op: 9, d: null });
  }

  /** Tells the bot about a member (connect + SSRC) and gives it the call's keys. */
  #attach(member: SimulatedMember): void {
    const call = this.#call;
    if (!call) return;
    this.#send({ op: 11, d: { user_ids: [member.userId] } });
    this.#send({ op: 5, d: { user_id: member.userId, ssrc: member.ssrc, speaking: 0 } });
    member.attach({
      secretKey: call.secretKey,
      mode: call.mode,
      channelId: call.grant.channelId,
      sendUdp: (sealed) => {
        const peer = this.udp.peer(BOT_SSRC);
        if (peer && this.#call === call) this.udp.send(peer, sealed);
      },
      speaking: (on) => {
        if (this.#call === call)
          this.#send({ op: 5, d: { user_id: member.userId, ssrc: member.ssrc, speaking: on ? 1 : 0 } });
      },
    });
    if (call.daveVersion > 0 && this.#daveStarted) this.#queueDave(() => this.#add(member));
  }

  #binary(ws: WebSocket, frame: Buffer): void {
    const op = frame[0]!;
    const payload = frame.subarray(1);
    this.records.push({ dir: "in", op, bytes: payload.length });
    const call = this.#call;
    if (!call || call.ws !== ws || call.daveVersion === 0) return;
    if (op === 26) {
      // A (new) key package: the bot starts a fresh group; every member joins it again.
      this.#daveStarted = true;
      this.#epoch = 0n;
      this.#sendBinary(25, this.#external.externalSenderPackage);
      for (const member of this.#members) {
        member.stopDave();
        if (call.selected) this.#queueDave(() => this.#add(member));
      }
    } else if (op === 28) {
      const resolve = this.#pendingCommit;
      this.#pendingCommit = undefined;
      resolve?.(Buffer.from(payload));
    }
  }

  #queueDave(step: () => Promise<void>): void {
    this.#daveQueue = this.#daveQueue.then(step).catch((error: unknown) => {
      this.records.push({ dir: "out", op: -1, d: `DAVE step failed: ${String(error)}` });
    });
  }

  async #add(member: SimulatedMember): Promise<void> {
    const call = this.#call;
    if (!call || !this.#members.has(member)) return;
    const keyPackage = member.startDave(call.grant.channelId, this.#external.externalSenderPackage);
    const proposals = await this.#external.addProposal(call.grant.channelId, this.#epoch, keyPackage);
    await this.#commitRound(proposals, member, (commit, welcome) => {
      if (!welcome) throw new Error(`the bot's commit adding ${member.userId} came without a welcome`);
      member.daveWelcome(welcome);
      return commit;
    });
  }

  async #remove(member: SimulatedMember): Promise<void> {
    const leaf = member.dave?.ownLeafIndex;
    member.stopDave();
    const call = this.#call;
    if (!call || leaf === null || leaf === undefined) return;
    const proposals = await this.#external.removeProposal(call.grant.channelId, this.#epoch, leaf);
    await this.#commitRound(proposals, undefined, (commit) => commit);
  }

  /** Opcode 27 → the bot's 28 → 29 to the bot and the commit to every other member → 23 → 22. */
  async #commitRound(
    proposals: Uint8Array,
    joining: SimulatedMember | undefined,
    onCommit: (commit: Uint8Array, welcome: Uint8Array | undefined) => Uint8Array,
  ): Promise<void> {
    const others = [...this.#members].filter((m) => m !== joining && m.dave?.ready);
    const userIds = [...this.#members].map((m) => m.userId);
    for (const m of others) m.daveProposals(proposals, userIds);
    const committed = new Promise<Buffer>((resolve) => {
      this.#pendingCommit = resolve;
    });
    this.#sendBinary(27, proposals);
    const { commit, welcome } = splitCommitWelcome(await committed);
    onCommit(commit, welcome);
    for (const m of others) m.daveCommit(commit);
    this.#epoch++;
    const transitionId = ++this.#transition;
    const ready = new Promise<void>((resolve) => this.#pendingReady.set(transitionId, resolve));
    const announce = new Uint8Array(2 + commit.length);
    new DataView(announce.buffer).setUint16(0, transitionId);
    announce.set(commit, 2);
    this.#sendBinary(29, announce);
    await ready;
    this.#pendingReady.delete(transitionId);
    this.#send({ op: 22, d: { transition_id: transitionId } });
    this.#changed();
  }

  #rtp(ssrc: number, packet: Buffer, at: number): void {
    const call = this.#call;
    if (!call || ssrc !== BOT_SSRC) return;
    let payload: Buffer;
    try {
      payload = openRtp(call.mode, call.secretKey, packet).payload;
    } catch {
      this.transportFailures++;
      return;
    }
    for (const member of this.#members) if (member.connected) member.hear(call.grant.userId, payload, at);
  }

  #send(packet: { op: number; d: unknown }): void {
    if (this.#call) this.#sendTo(this.#call.ws, packet);
  }

  #sendTo(ws: WebSocket, packet: { op: number; d: unknown }): void {
    if (ws.readyState !== WebSocket.OPEN) return;
    this.records.push({ dir: "out", op: packet.op, d: packet.d });
    ws.send(JSON.stringify({ ...packet, seq: ++this.#seq }));
  }

  #sendBinary(op: number, payload: Uint8Array): void {
    const ws = this.#call?.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return;
    this.records.push({ dir: "out", op, bytes: payload.length });
    const frame = Buffer.alloc(3 + payload.length);
    frame.writeUInt16BE(++this.#seq & 0xffff, 0);
    frame[2] = op;
    frame.set(payload, 3);
    ws.send(frame);
  }

  #endCall(): void {
    if (!this.#call) return;
    this.#call = undefined;
    this.#daveStarted = false;
    this.#pendingCommit = undefined;
    for (const member of this.#members) {
      member.attach(undefined);
      member.stopDave();
    }
  }

  async close(): Promise<void> {
    for (const client of this.#wss.clients) client.terminate();
    this.#wss.close();
    this.#https.closeAllConnections();
    await new Promise<void>((resolve) => this.#https.close(() => resolve()));
    await this.udp.close();
  }
}
