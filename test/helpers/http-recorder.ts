// A real HTTP server on a free loopback port that records every request (method, path, headers,
// raw body) and answers with what the test's handler says: the far end of webhooks, HTTP tools
// and call reports in tests.
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface Answer {
  status?: number;
  /** A JSON value (sent as JSON) or raw text. */
  json?: unknown;
  text?: string;
  /** Wait this long before answering, ms. */
  delayMs?: number;
}

export class HttpRecorder {
  readonly requests: RecordedRequest[] = [];
  readonly #server: Server;
  #url = "";

  private constructor(handler: (req: RecordedRequest) => Answer) {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const recorded = {
          method: req.method ?? "",
          path: req.url ?? "/",
          headers: req.headers,
          body: Buffer.concat(chunks),
        };
        this.requests.push(recorded);
        const a = handler(recorded);
        const send = () => {
          if (res.destroyed) return;
          const body = a.json !== undefined ? JSON.stringify(a.json) : (a.text ?? "");
          res.writeHead(a.status ?? 200, {
            "content-type": a.json !== undefined ? "application/json" : "text/plain",
          });
          res.end(body);
        };
        if (a.delayMs) setTimeout(send, a.delayMs);
        else send();
      });
    });
  }

  static async start(handler: (req: RecordedRequest) => Answer): Promise<HttpRecorder> {
    const r = new HttpRecorder(handler);
    await new Promise<void>((resolve) => r.#server.listen(0, "127.0.0.1", resolve));
    r.#url = `http://127.0.0.1:${(r.#server.address() as AddressInfo).port}`;
    return r;
  }

  get url(): string {
    return this.#url;
  }

  /** Requests to `path` (exact, or its prefix when it ends with `*`). */
  to(path: string): RecordedRequest[] {
    return this.requests.filter((r) =>
      path.endsWith("*") ? r.path.startsWith(path.slice(0, -1)) : r.path === path,
    );
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}
