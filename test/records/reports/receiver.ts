// A report receiver as a user would write one (node:http, docs/data.md "Call reports"): it checks the
// signature over the raw body and the timestamp, answers 401 when they do not hold, and otherwise
// answers with the next scripted status (200 once the script is used up). Tests await its requests.
import { createHmac, timingSafeEqual } from "node:crypto";
import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The signature and timestamp held. */
  verified: boolean;
  status: number;
}

/** docs/data.md's receiver check: HMAC-SHA256 of "<timestamp>." + raw body, timestamp within 5 minutes. */
export function verifyReport(secret: string, headers: IncomingHttpHeaders, rawBody: Buffer): boolean {
  const timestamp = headers["x-voice-bridge-timestamp"];
  const signature = headers["x-voice-bridge-signature"];
  if (typeof timestamp !== "string" || typeof signature !== "string") return false;
  if (!/^\d+$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const expected = `sha256=${createHmac("sha256", secret).update(`${timestamp}.`).update(rawBody).digest("hex")}`;
  return (
    signature.length === expected.length && timingSafeEqual(Buffer.from(signature), Buffer.from(expected))
  );
}

export class Receiver {
  readonly secret: string;
  readonly received: Received[] = [];
  /** Statuses for the next requests that verify, in order; then 200. */
  script: number[] = [];
  /** Extra headers on the next scripted answer (e.g. Retry-After). */
  headers: Record<string, string> = {};
  /** When set, requests are held unanswered (a receiver that hangs). */
  hang = false;
  #server: Server | undefined;
  #waiters: ((r: Received) => void)[] = [];
  #port = 0;

  /**
   * `port`: where it will listen (0: any, known after listen()). A free port (helpers/free-port.ts:
   * none the kernel hands another socket meanwhile) lets tests start it later, down until then.
   */
  constructor(secret: string, port = 0) {
    this.secret = secret;
    this.#port = port;
  }

  get url(): string {
    return `http://127.0.0.1:${this.#port}/voice-bridge/reports`;
  }

  async listen(): Promise<this> {
    this.#server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      if (this.hang) return;
      const body = Buffer.concat(chunks);
      const verified = req.method === "POST" && verifyReport(this.secret, req.headers, body);
      const status = verified ? (this.script.shift() ?? 200) : 401;
      res.writeHead(status, verified ? this.headers : {}).end(verified ? "" : "bad signature");
      const r = { headers: req.headers, body, verified, status };
      this.received.push(r);
      this.#waiters.shift()?.(r);
    });
    this.#server.listen(this.#port, "127.0.0.1");
    await once(this.#server, "listening");
    this.#port = (this.#server.address() as AddressInfo).port;
    return this;
  }

  /** The next request (answered). */
  next(): Promise<Received> {
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  async close(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    this.#server = undefined;
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}
