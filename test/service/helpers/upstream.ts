// A tiny chat-completions server for tests of the openai-compatible engine: it streams scripted
// chunks (text, reasoning_content, tool calls), can fail mid-stream or refuse, and records requests.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface UpstreamScript {
  /** Chunks' `delta` objects, in order; a string is sent as-is (to send garbage). */
  deltas: (Record<string, unknown> | string)[];
  finish?: string;
  /** Breaks the connection after this many deltas. */
  dieAfter?: number;
  /** Answers this HTTP status with a JSON error instead of streaming. */
  status?: number;
  /** Milliseconds between chunks. */
  delayMs?: number;
}

export interface Upstream {
  url: string;
  requests: Record<string, unknown>[];
  script: UpstreamScript;
  close(): Promise<void>;
}

export async function startUpstream(script: UpstreamScript): Promise<Upstream> {
  const up: Upstream = { url: "", requests: [], script, close: async () => {} };
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => {
      raw += c;
    });
    req.on("end", async () => {
      if (req.url !== "/v1/chat/completions") return void res.writeHead(404).end();
      up.requests.push(JSON.parse(raw) as Record<string, unknown>);
      const s = up.script;
      if (s.status) {
        res.writeHead(s.status, { "content-type": "application/json" });
        return void res.end(JSON.stringify({ error: { message: `scripted failure ${s.status}` } }));
      }
      res.writeHead(200, { "content-type": "text/event-stream" });
      const chunk = (delta: Record<string, unknown>, finish: string | null) =>
        `data: ${JSON.stringify({ id: "up-1", object: "chat.completion.chunk", created: 1, model: "tiny", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      for (let i = 0; i < s.deltas.length; i++) {
        if (s.dieAfter !== undefined && i >= s.dieAfter) return void res.destroy();
        const d = s.deltas[i]!;
        res.write(typeof d === "string" ? `data: ${d}\n\n` : chunk(d, null));
        if (s.delayMs) await new Promise((r) => setTimeout(r, s.delayMs));
      }
      res.write(chunk({}, s.finish ?? "stop"));
      res.write(
        `data: ${JSON.stringify({ id: "up-1", choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } })}\n\n`,
      );
      res.end("data: [DONE]\n\n");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  up.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  up.close = () =>
    new Promise((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return up;
}
