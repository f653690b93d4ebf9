// Asterisk's side of AudioSocket for tests, written from the published protocol (not from the
// bridge's code): kind (1 byte), length (u16 big-endian), payload. It connects, sends the
// UUID, streams slin audio in real time in 20 ms frames, sends DTMF and hang-up, and keeps
// every frame the server sends back.
import { connect, type Socket } from "node:net";

export interface ReceivedFrame {
  kind: number;
  payload: Buffer;
}

const RATE_KINDS: Record<number, number> = {
  8000: 0x10,
  12000: 0x11,
  16000: 0x12,
  24000: 0x13,
  32000: 0x14,
  44100: 0x15,
  48000: 0x16,
  96000: 0x17,
  192000: 0x18,
};

export function frame(kind: number, payload: Uint8Array = new Uint8Array(0)): Buffer {
  const out = Buffer.alloc(3 + payload.length);
  out[0] = kind;
  out.writeUInt16BE(payload.length, 1);
  out.set(payload, 3);
  return out;
}

export function uuidFrame(uuid: string): Buffer {
  return frame(0x01, Buffer.from(uuid.replaceAll("-", ""), "hex"));
}

export function audioFrame(pcm: Int16Array, rate: number): Buffer {
  const body = Buffer.alloc(pcm.length * 2);
  pcm.forEach((s, i) => {
    body.writeInt16LE(s, i * 2);
  });
  return frame(RATE_KINDS[rate]!, body);
}

export class AsteriskClient {
  readonly socket: Socket;
  readonly received: ReceivedFrame[] = [];
  closed = false;
  #buf = Buffer.alloc(0);

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on("data", (chunk: Buffer) => {
      this.#buf = Buffer.concat([this.#buf, chunk]);
      while (this.#buf.length >= 3) {
        const len = this.#buf.readUInt16BE(1);
        if (this.#buf.length < 3 + len) break;
        this.received.push({ kind: this.#buf[0]!, payload: Buffer.from(this.#buf.subarray(3, 3 + len)) });
        this.#buf = this.#buf.subarray(3 + len);
      }
    });
    socket.on("close", () => {
      this.closed = true;
    });
    socket.on("error", () => {});
  }

  static async connect(port: number): Promise<AsteriskClient> {
    const socket = connect({ host: "127.0.0.1", port });
    await new Promise<void>((resolve, reject) => {
      socket.once("connect", resolve);
      socket.once("error", reject);
    });
    socket.setNoDelay(true);
    return new AsteriskClient(socket);
  }

  send(bytes: Uint8Array): void {
    this.socket.write(bytes);
  }

  /** Streams `pcm` as 20 ms frames at real time (paced on wall time, catching up when late). */
  async stream(pcm: Int16Array, rate: number): Promise<void> {
    const n = rate / 50;
    const start = performance.now();
    for (let i = 0, k = 0; i < pcm.length; i += n, k++) {
      const due = start + k * 20;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const chunk = new Int16Array(n);
      chunk.set(pcm.subarray(i, i + n));
      this.send(audioFrame(chunk, rate));
    }
  }

  /** Audio the server sent, as samples, and the kinds it used. */
  audio(): { pcm: Int16Array; kinds: Set<number>; frameBytes: Set<number> } {
    const frames = this.received.filter((f) => f.kind >= 0x10 && f.kind <= 0x18);
    const total = frames.reduce((s, f) => s + f.payload.length / 2, 0);
    const pcm = new Int16Array(total);
    let at = 0;
    for (const f of frames)
      for (let i = 0; i < f.payload.length; i += 2) pcm[at++] = f.payload.readInt16LE(i);
    return {
      pcm,
      kinds: new Set(frames.map((f) => f.kind)),
      frameBytes: new Set(frames.map((f) => f.payload.length)),
    };
  }

  close(): void {
    this.socket.destroy();
  }
}
