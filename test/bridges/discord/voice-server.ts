// A Discord voice server for one channel, per the voice gateway v8 documentation, without DAVE
// (Session Description says dave_protocol_version 0): WSS (TLS is mandatory for the library) with
// Hello (op 8), Identify → Ready (op 2) with the UDP address and aead_aes256_gcm_rtpsize, heartbeat
// ACK (op 6), Select Protocol → Session Description (op 4), Resume (op 7) → Resumed (op 9); UDP IP
// discovery and RTP in both directions, AES-256-GCM with the 4-byte counter nonce after the tag.
// A member "speaks" Opus packets (Speaking op 5 maps their SSRC); what the bot sends is decrypted and kept.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { createSocket, type RemoteInfo, type Socket } from "node:dgram";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";

export interface VoiceServer {
  /** `host:port` for VOICE_SERVER_UPDATE. */
  endpoint: string;
  /** Opus packets the bot sent, decrypted, in order of arrival, with their arrival time. */
  received: Array<{ at: number; opus: Buffer }>;
  /** Identify payloads and Resume payloads seen. */
  identifies: number;
  resumes: number;
  /** The member speaks these packets, 20 ms apart. */
  speak(userId: string, packets: Uint8Array[]): Promise<void>;
  /** Closes the bot's voice WebSocket with a code (e.g. 4015, voice server crashed). */
  dropSocket(code: number): void;
  close(): Promise<void>;
}

export async function startVoiceServer(tls: { key: string; cert: string }): Promise<VoiceServer> {
  const secret = randomBytes(32);
  const botSsrc = 1111;
  const memberSsrc = 2222;
  const received: VoiceServer["received"] = [];
  let socket: WebSocket | undefined;
  let bot: RemoteInfo | undefined;
  let seq = 0;
  const counts = { identifies: 0, resumes: 0 };

  const udp: Socket = createSocket("udp4");
  await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", resolve));
  const udpPort = (udp.address() as AddressInfo).port;
  udp.on("message", (msg, rinfo) => {
    if (msg.length === 74 && msg.readUInt16BE(0) === 1) {
      bot = rinfo;
      const reply = Buffer.alloc(74);
      reply.writeUInt16BE(2, 0);
      reply.writeUInt16BE(70, 2);
      reply.writeUInt32BE(msg.readUInt32BE(4), 4);
      reply.write(rinfo.address, 8, "utf8");
      reply.writeUInt16BE(rinfo.port, 72);
      udp.send(reply, rinfo.port, rinfo.address);
      return;
    }
    if (msg.length <= 8) return; // keep-alive
    const headerSize = msg[0]! & 0x10 ? 16 : 12;
    const nonce = Buffer.alloc(12);
    msg.copy(nonce, 0, msg.length - 4);
    const d = createDecipheriv("aes-256-gcm", secret, nonce);
    d.setAAD(msg.subarray(0, headerSize));
    d.setAuthTag(msg.subarray(msg.length - 20, msg.length - 4));
    const opus = Buffer.concat([d.update(msg.subarray(headerSize, msg.length - 20)), d.final()]);
    received.push({ at: performance.now(), opus });
  });

  const https: Server = createServer({ key: tls.key, cert: tls.cert });
  const wss = new WebSocketServer({ server: https });
  const send = (op: number, d: unknown) => socket?.send(JSON.stringify({ op, d, seq: ++seq }));
  wss.on("connection", (ws) => {
    socket = ws;
    ws.send(JSON.stringify({ op: 8, d: { v: 8, heartbeat_interval: 13750 } }));
    ws.on("message", (data, isBinary) => {
      if (isBinary) return;
      const msg = JSON.parse(String(data)) as { op: number; d: { t?: number; data?: { mode: string } } };
      if (msg.op === 0) {
        counts.identifies++;
        send(2, { ssrc: botSsrc, ip: "127.0.0.1", port: udpPort, modes: ["aead_aes256_gcm_rtpsize"] });
      } else if (msg.op === 1) {
        send(4, { mode: msg.d.data?.mode, secret_key: [...secret], dave_protocol_version: 0 });
      } else if (msg.op === 3) {
        ws.send(JSON.stringify({ op: 6, d: { t: msg.d.t } }));
      } else if (msg.op === 7) {
        counts.resumes++;
        send(9, null);
      }
    });
  });
  await new Promise<void>((resolve) => https.listen(0, "127.0.0.1", resolve));
  const wsPort = (https.address() as AddressInfo).port;

  let counter = 0;
  let rtpSeq = 0;
  let ts = 0;
  return {
    endpoint: `127.0.0.1:${wsPort}`,
    received,
    get identifies() {
      return counts.identifies;
    },
    get resumes() {
      return counts.resumes;
    },
    async speak(userId, packets) {
      send(5, { user_id: userId, ssrc: memberSsrc, speaking: 1 });
      const start = performance.now();
      for (let i = 0; i < packets.length; i++) {
        const due = start + i * 20;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        if (!bot) throw new Error("voice server: the bot has not done IP discovery");
        const header = Buffer.alloc(12);
        header[0] = 0x80;
        header[1] = 0x78;
        header.writeUInt16BE(rtpSeq++ & 0xffff, 2);
        header.writeUInt32BE(ts >>> 0, 4);
        ts += 960;
        header.writeUInt32BE(memberSsrc, 8);
        const nonce = Buffer.alloc(12);
        nonce.writeUInt32BE(++counter, 0);
        const c = createCipheriv("aes-256-gcm", secret, nonce);
        c.setAAD(header);
        const body = Buffer.concat([c.update(packets[i]!), c.final(), c.getAuthTag()]);
        udp.send(Buffer.concat([header, body, nonce.subarray(0, 4)]), bot.port, bot.address);
      }
    },
    dropSocket(code) {
      socket?.close(code, "voice server crashed");
    },
    async close() {
      for (const c of wss.clients) c.terminate();
      wss.close();
      udp.close();
      await new Promise<void>((resolve) => https.close(() => resolve()));
    },
  };
}
