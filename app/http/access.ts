// Who may use the bridge's pages and records (`server.token`): the console, its live feed,
// browser calls, /calls and recordings. A program sends `Authorization: Bearer <token>`; a person
// opens the URL the bridge prints (`/?token=…`), which trades the token for a cookie (HttpOnly,
// SameSite=Strict) so that the page, its sockets and its <audio> elements carry it from then on.
// WebSocket upgrades are also held to the page's own origin, so another site open in the same
// browser cannot reach the console's sockets with the person's cookie.
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyInstance } from "fastify";

export const TOKEN_COOKIE = "voice_bridge_token";

const digest = (s: string) => createHash("sha256").update(s).digest();

const NEEDS_TOKEN_PAGE = `<!doctype html><meta charset="utf-8"><title>voice-bridge: token needed</title>
<body style="font:16px system-ui;max-width:36em;margin:4em auto;color:#222">
<h1>This console needs the bridge's token</h1>
<p>Open the address the bridge printed when it started: it ends in <code>/?token=…</code>.
The token is the bridge's <code>BRIDGE_TOKEN</code> (config key <code>server.token</code>).</p>`;

export class BridgeAccess {
  readonly #token: Buffer | undefined;
  readonly #raw: string | undefined;

  constructor(token: string | undefined) {
    this.#raw = token;
    this.#token = token === undefined ? undefined : digest(token);
  }

  get required(): boolean {
    return this.#token !== undefined;
  }

  /** `base` (the console's URL) with the token a person opens it with, when one is set. */
  personUrl(base: string): string {
    return this.#raw === undefined ? base : `${base}?token=${encodeURIComponent(this.#raw)}`;
  }

  /** True when no token is set, or the request carries it (bearer header or cookie). */
  allows(headers: IncomingHttpHeaders): boolean {
    if (!this.#token) return true;
    const auth = headers.authorization;
    const bearer = auth?.startsWith("Bearer ") ? auth.slice(7).trim() : undefined;
    return this.#matches(bearer) || this.#matches(cookie(headers.cookie, TOKEN_COOKIE));
  }

  /**
   * Guards the paths `guarded` names: 401 without the token. `GET /?token=…` with the right token
   * sets the cookie and redirects to `/`, so the token leaves the address bar and the history.
   */
  guard(http: FastifyInstance, guarded: (path: string) => boolean): void {
    http.addHook("onRequest", async (req, reply) => {
      const [path = "/", query = ""] = req.url.split("?", 2);
      if (!this.#token || !guarded(path)) return;
      const offered = path === "/" ? new URLSearchParams(query).get("token") : null;
      if (offered !== null && this.#matches(offered)) {
        return reply
          .header(
            "set-cookie",
            `${TOKEN_COOKIE}=${encodeURIComponent(offered)}; HttpOnly; SameSite=Strict; Path=/`,
          )
          .redirect("/", 302);
      }
      if (this.allows(req.headers)) return;
      if (path === "/") return reply.code(401).type("text/html; charset=utf-8").send(NEEDS_TOKEN_PAGE);
      return reply.code(401).send({
        error: {
          message:
            offered === null
              ? "this bridge needs its token: send Authorization: Bearer <BRIDGE_TOKEN>, or open the console's /?token=… address"
              : "token: not this bridge's token",
          type: "unauthorized",
        },
      });
    });
  }

  /**
   * Lets a WebSocket upgrade through, or answers it with 401 (no token) or 403 (a page of another
   * origin) and returns false.
   */
  upgrade(req: IncomingMessage, socket: Duplex): boolean {
    const origin = req.headers.origin;
    const host = req.headers["x-forwarded-host"] ?? req.headers.host;
    if (
      origin !== undefined &&
      host !== undefined &&
      originHost(origin) !== String(host).split(",")[0]!.trim()
    ) {
      refuse(socket, "403 Forbidden", `a page of ${origin} may not open this bridge's sockets`);
      return false;
    }
    if (!this.allows(req.headers)) {
      refuse(socket, "401 Unauthorized", "this bridge needs its token (BRIDGE_TOKEN)");
      return false;
    }
    return true;
  }

  #matches(offered: string | undefined): boolean {
    return (
      offered !== undefined && this.#token !== undefined && timingSafeEqual(digest(offered), this.#token)
    );
  }
}

function cookie(header: string | undefined, name: string): string | undefined {
  for (const part of header?.split(";") ?? []) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

function originHost(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    return undefined;
  }
}

function refuse(socket: Duplex, status: string, text: string): void {
  const body = `${text}\n`;
  socket.end(
    `HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}
