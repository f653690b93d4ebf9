// The smallest Discord that refuses a bot, as Discord's API v10 documents it: GET /gateway/bot
// answers 401 for a token it does not know; otherwise it gives a gateway that says Hello (op 10)
// and, on Identify (op 2), closes with the code it was told to (4004 authentication failed,
// 4014 disallowed intents). Loopback, ephemeral port.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";

export interface RefusingDiscord {
  /** What DISCORD_API_BASE is set to. */
  apiBase: string;
  /** Identify payloads received (the intents the bot asked for). */
  identifies: Array<{ token: string; intents: number }>;
  close(): Promise<void>;
}

export async function startRefusingDiscord(opts: {
  validToken: string;
  /** Close code for the gateway's answer to Identify. */
  closeOnIdentify: 4004 | 4014;
}): Promise<RefusingDiscord> {
  const identifies: RefusingDiscord["identifies"] = [];
  let port = 0;
  const http: Server = createServer((req, res) => {
    if (req.method === "GET" && req.url === "/api/v10/gateway/bot") {
      if (req.headers.authorization !== `Bot ${opts.validToken}`) {
        res.writeHead(401, { "content-type": "application/json" });
        res.end(JSON.stringify({ message: "401: Unauthorized", code: 0 }));
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          url: `ws://127.0.0.1:${port}`,
          shards: 1,
          session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 },
        }),
      );
      return;
    }
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ message: "404: Not Found", code: 0 }));
  });
  const wss = new WebSocketServer({ server: http });
  wss.on("connection", (ws) => {
    ws.send(JSON.stringify({ op: 10, d: { heartbeat_interval: 41250 }, s: null, t: null }));
    ws.on("message", (data) => {
      const msg = JSON.parse(String(data)) as { op: number; d: { token?: string; intents?: number } | null };
      if (msg.op === 1) ws.send(JSON.stringify({ op: 11, d: null, s: null, t: null }));
      if (msg.op !== 2) return;
      identifies.push({ token: msg.d?.token ?? "", intents: msg.d?.intents ?? 0 });
      ws.close(
        opts.closeOnIdentify,
        opts.closeOnIdentify === 4004 ? "Authentication failed." : "Disallowed intent(s).",
      );
    });
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  port = (http.address() as AddressInfo).port;
  return {
    apiBase: `http://127.0.0.1:${port}/api`,
    identifies,
    async close() {
      for (const c of wss.clients) c.terminate();
      wss.close();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
