// The fake voice server: the v8 voice gateway over TLS (wss://127.0.0.1:PORT?v=8) plus its UDP socket, for
// one bot connection at a time. Hello (8) → Identify (0, checked against the session and token the main
// gateway handed out) → Ready (2) → UDP discovery → Select Protocol (1) → Session Description (4) with the
// DAVE version; heartbeats (3 → 6), Resume (7 → 9) after a resumable close, Speaking (5) and client
// connect/disconnect (11/13) for simulated members, and DAVE opcodes routed to the call's DaveGroup.

import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer, type Server } from "node:https";
import { WebSocket, WebSocketServer } from "ws";
import type { SelfSignedCert } from "../helpers/tls-cert.ts";
import { DaveExternalSender } from "./dave-external-sender.ts";
import { DaveGroup } from "./dave-group.ts";
import { isDaveFrame, isSilenceFrame } from "./media-frames.ts";
import type { SimulatedMember } from "./member.ts";
import { openRtp, TRANSPORT_MODES, type TransportMode } from "./transport-crypto.ts";
import { VoiceUdpServer } from "./voice-udp.ts";
import { Waiters } from "./waiters.ts";

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
  /** How long members take to answer DAVE (the bot's key package, a newcomer's join), ms. Default 0. */
  daveDelayMs?: number;
}

interface Call {
  grant: VoiceGrant;
  ws: WebSocket;
  secretKey: Uint8Array;
  mode: TransportMode;
  daveVersion: number;
  /** The call's DAVE group, when it runs DAVE. */
  dave: DaveGroup | undefined;
  selected: boolean;
}

export class FakeVoiceServer {
  readonly #https: Server;
  readonly #wss: WebSocketServer;
  readonly udp: VoiceUdpServer;
  readonly #external: DaveExternalSender;
  readonly #dave: boolean;
  readonly #modes: readonly TransportMode[];
  readonly #daveDelayMs: number;
  #grant: VoiceGrant | undefined;
  #call: Call | undefined;
  #seq = 0;
  /** Members of the channel the bot is in (joined to the call as soon as the bot is connected). */
  readonly #members = new Set<SimulatedMember>();
  readonly records: VoiceRecord[] = [];
  /** Opcode 5 payloads from the bot. */
  readonly botSpeaking: unknown[] = [];
  /** Bot RTP packets that failed transport decryption. */
  transportFailures = 0;
  /**
   * Bot media frames (not the silence frame) that arrived without DAVE encryption while the call ran
   * DAVE outside a protocol-version transition: what real clients drop. Must stay 0.
   */
  clearMediaFrames = 0;
  /** Bot media frames that arrived DAVE-encrypted. */
  daveMediaFrames = 0;
  readonly #waiters = new Waiters();

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
    this.#daveDelayMs = options.daveDelayMs ?? 0;
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

  /**
   * Closes the bot's voice WebSocket with a close code: 4015 (crashed) or below 4000 (e.g. 1012 restart)
   * leave the call resumable (op 7); 4006 (session no longer valid), 4009 (timed out), 4014
   * (disconnected) end it.
   */
  closeWith(code: number, reason = ""): void {
    const call = this.#call;
    if (!call) throw new Error("no bot is connected to the voice server");
    call.ws.close(code, reason);
    // The call survives a close the client may resume from (a crash, a dropped socket); not the others.
    if (code !== 4015 && code >= 4000) this.#endCall();
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
    if (call.dave) call.dave.memberLeft(member);
    else member.stopDave();
  }

  /** The grant the bot's voice session runs on (undefined while it is in no channel). */
  get currentGrant(): VoiceGrant | undefined {
    return this.#grant;
  }

  /**
   * Downgrades the call to transport-only (DAVE protocol version 0 transition); resolves once executed.
   * From then on members send and accept clear media, as the protocol has them do.
   */
  async downgradeDave(): Promise<void> {
    const call = this.#call;
    if (!call?.dave) throw new Error("the bot's call runs no DAVE to downgrade");
    await call.dave.downgrade(() => {
      call.daveVersion = 0;
    });
  }

  /** Upgrades a downgraded call back to DAVE (prepare epoch 1, a new group); resolves once it runs DAVE. */
  async upgradeDave(): Promise<void> {
    const call = this.#call;
    if (!call?.dave) throw new Error("the bot's call was not started with DAVE");
    call.dave.upgrade();
    // The bot answers 24 with a key package (26): the group is rebuilt as at the start.
    await this.waitFor(() => this.#call !== call || call.dave?.started === true);
    await call.dave.settled();
    // Clear media was legitimate until the new group's transition executed.
    call.daveVersion = 1;
  }

  /** Resolves when every DAVE change queued so far (adds, removes) has been committed and executed. */
  daveSettled(): Promise<void> {
    return this.#call?.dave?.settled() ?? Promise.resolve();
  }

  /** Resolves when `test()` holds, re-checked on every voice gateway message and every bot RTP packet. */
  waitFor(test: () => boolean): Promise<void> {
    return this.#waiters.waitFor(test);
  }

  #changed(): void {
    this.#waiters.changed();
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
        else this.#json(ws, parsePacket(String(data)));
      } catch (error) {
        this.records.push({ dir: "in", op: -1, d: String(error) });
        ws.close(4002, "Failed to decode payload");
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
        if (this.#call?.ws === ws) this.#call.dave?.transitionReady(Number(packet.d.transition_id));
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
    const daveVersion = this.#dave ? Math.min(1, maxDave) : 0;
    const call: Call = {
      grant,
      ws,
      secretKey: randomBytes(32),
      mode: this.#modes[0]!,
      daveVersion,
      dave: undefined,
      selected: false,
    };
    if (daveVersion > 0) {
      call.dave = new DaveGroup(
        this.#external,
        {
          channelId: grant.channelId,
          sendBinary: (op, payload) => {
            if (this.#call === call) this.#sendBinary(op, payload);
          },
          sendJson: (packet) => {
            if (this.#call === call) this.#send(packet);
          },
          changed: () => this.#changed(),
          failed: (error) =>
            this.records.push({ dir: "out", op: -1, d: `DAVE step failed: ${String(error)}` }),
        },
        () => [...this.#members].filter((m) => m.connected),
        this.#daveDelayMs,
      );
    }
    this.#call = call;
    this.#sendTo(ws, {
      op: 2,
      d: {
        ssrc: BOT_SSRC,
        ip: "127.0.0.1",
        port: this.udp.port,
        modes: [...this.#modes],
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
      dave: () => this.#call === call && call.daveVersion > 0,
      sendUdp: (sealed) => {
        const peer = this.udp.peer(BOT_SSRC);
        if (peer && this.#call === call) this.udp.send(peer, sealed);
      },
      speaking: (on) => {
        if (this.#call === call)
          this.#send({ op: 5, d: { user_id: member.userId, ssrc: member.ssrc, speaking: on ? 1 : 0 } });
      },
    });
    call.dave?.memberJoined(member);
  }

  #binary(ws: WebSocket, frame: Buffer): void {
    const op = frame[0]!;
    const payload = frame.subarray(1);
    this.records.push({ dir: "in", op, bytes: payload.length });
    const call = this.#call;
    if (!call || call.ws !== ws || !call.dave) return;
    if (op === 26) call.dave.keyPackage();
    else if (op === 28) call.dave.commitWelcome(Buffer.from(payload));
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
    if (!isSilenceFrame(payload)) {
      if (isDaveFrame(payload)) this.daveMediaFrames++;
      else if (call.daveVersion > 0) this.clearMediaFrames++;
    }
    for (const member of this.#members) if (member.connected) member.hear(call.grant.userId, payload, at);
    if (this.#waiters.pending) this.#changed();
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

function parsePacket(text: string): { op: number; d: Record<string, unknown> } {
  const packet = JSON.parse(text) as { op?: unknown; d?: unknown };
  if (typeof packet.op !== "number")
    throw new Error(`voice gateway packet without a numeric op: ${text.slice(0, 80)}`);
  const d = packet.d && typeof packet.d === "object" ? (packet.d as Record<string, unknown>) : {};
  return { op: packet.op, d };
}
