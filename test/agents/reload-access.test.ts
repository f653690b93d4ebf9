// Who may POST /admin/reload: with a bridge token (the default since the bridge makes one), only a
// request carrying it, even from this machine; with the token `off`, only this machine.
import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { BridgeAccess } from "../../app/http/access.ts";
import { RELOAD_PATH, registerReload } from "../../app/reload.ts";

async function reloadServer(token: string | undefined) {
  const http = Fastify();
  let reloads = 0;
  registerReload(http, new BridgeAccess(token), () => {
    reloads++;
    return { ok: true, agents: ["default"], restartNeeded: [] };
  });
  await http.ready();
  return { http, reloads: () => reloads };
}

describe("POST /admin/reload", () => {
  it("with a token: only with that token, from this machine too", async () => {
    const { http, reloads } = await reloadServer("reload-token-0123");
    const post = (headers: Record<string, string>, remoteAddress = "127.0.0.1") =>
      http.inject({ method: "POST", url: RELOAD_PATH, headers, remoteAddress });
    expect((await post({})).statusCode).toBe(401);
    expect((await post({ authorization: "Bearer wrong" })).statusCode).toBe(401);
    expect(reloads()).toBe(0);
    const ok = await post({ authorization: "Bearer reload-token-0123" }, "203.0.113.9");
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ ok: true, agents: ["default"], restartNeeded: [] });
    expect(reloads()).toBe(1);
    await http.close();
  });

  it("with the token off: this machine only", async () => {
    const { http, reloads } = await reloadServer(undefined);
    const post = (remoteAddress: string) => http.inject({ method: "POST", url: RELOAD_PATH, remoteAddress });
    expect((await post("203.0.113.9")).statusCode).toBe(403);
    expect(reloads()).toBe(0);
    expect((await post("127.0.0.1")).statusCode).toBe(200);
    expect((await post("::1")).statusCode).toBe(200);
    expect(reloads()).toBe(2);
    await http.close();
  });
});
