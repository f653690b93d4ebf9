// The voice webhook and the media stream upgrade on a real server: TwiML, signatures, 403s.
import { request } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { until } from "../../helpers/until.ts";
import { AUTH_TOKEN, type Rig, StreamClient, sign, startRig } from "./helpers.ts";

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const CALL = {
  CallSid: "CA1234",
  AccountSid: `AC${"a".repeat(32)}`,
  From: "+15550001111",
  To: "+15552223333",
};

async function postVoice(r: Rig, params: Record<string, string>, headers: Record<string, string> = {}) {
  return fetch(`${r.base}/twilio/voice`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(params).toString(),
  });
}

describe("POST /twilio/voice", () => {
  it("answers a signed webhook with <Connect><Stream> to the media path, carrying From/To/CallSid", async () => {
    rig = await startRig({ authToken: AUTH_TOKEN });
    const url = `${rig.base}/twilio/voice`;
    const res = await postVoice(rig, CALL, { "x-twilio-signature": sign(AUTH_TOKEN, url, CALL) });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/xml/);
    const xml = await res.text();
    expect(xml).toContain(`<Connect><Stream url="${rig.wsUrl}">`);
    expect(xml).toContain('<Parameter name="From" value="+15550001111"/>');
    expect(xml).toContain('<Parameter name="To" value="+15552223333"/>');
    expect(xml).toContain('<Parameter name="CallSid" value="CA1234"/>');
  });

  it("refuses a forged or missing signature with 403", async () => {
    rig = await startRig({ authToken: AUTH_TOKEN });
    const url = `${rig.base}/twilio/voice`;
    const forged = sign("another-token", url, CALL);
    expect((await postVoice(rig, CALL, { "x-twilio-signature": forged })).status).toBe(403);
    expect((await postVoice(rig, CALL)).status).toBe(403);
    // Signed for other parameters than those sent.
    const tampered = { ...CALL, From: "+19999999999" };
    expect(
      (await postVoice(rig, tampered, { "x-twilio-signature": sign(AUTH_TOKEN, url, CALL) })).status,
    ).toBe(403);
  });

  it("builds wss:// URLs from X-Forwarded-Proto and Host when no public URL is configured", async () => {
    rig = await startRig({ authToken: AUTH_TOKEN });
    const publicUrl = "https://bridge.example.com/twilio/voice";
    // fetch will not send a Host header of our choosing: plain node:http does, like a proxy.
    const body = new URLSearchParams(CALL).toString();
    const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(`${rig!.base}/twilio/voice`, {
        method: "POST",
        headers: {
          host: "bridge.example.com",
          "x-forwarded-proto": "https",
          "content-type": "application/x-www-form-urlencoded",
          "x-twilio-signature": sign(AUTH_TOKEN, publicUrl, CALL),
        },
      });
      req.on("response", (res) => {
        let t = "";
        res.on("data", (d: Buffer) => {
          t += d.toString();
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text: t }));
      });
      req.on("error", reject);
      req.end(body);
    });
    expect(status).toBe(200);
    expect(text).toContain('<Stream url="wss://bridge.example.com/twilio/media">');
  });

  it("accepts unsigned webhooks when no auth token is configured, from this machine only", async () => {
    rig = await startRig();
    const res = await postVoice(rig, CALL);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("<Connect><Stream");
    // Through a proxy or tunnel on this machine (it says whom it forwards for): not this machine's caller.
    const proxied = await postVoice(rig, CALL, { "x-forwarded-for": "203.0.113.9" });
    expect(proxied.status).toBe(403);
    expect(await proxied.text()).toContain("TWILIO_AUTH_TOKEN");
    await expect(StreamClient.open(rig.wsUrl, { forwarded: "for=203.0.113.9" })).rejects.toThrow("HTTP 403");
    await expect(StreamClient.open(rig.wsUrl)).resolves.toBeInstanceOf(StreamClient);
  });
});

describe("media stream upgrade", () => {
  it("accepts a signed upgrade and hands the call to the session at start", async () => {
    rig = await startRig({ authToken: AUTH_TOKEN });
    const client = await StreamClient.open(rig.wsUrl, { "x-twilio-signature": sign(AUTH_TOKEN, rig.wsUrl) });
    client.connected();
    client.start({ From: "+15550001111", To: "+15552223333", CallSid: "CA0001" });
    await until(() => rig!.calls.length === 1, "onCall");
    const t = rig.calls[0]!.transport;
    expect(t.info).toMatchObject({
      callId: "CA0001",
      transport: "twilio",
      from: "+15550001111",
      to: "+15552223333",
    });
    expect(t.info.params.streamSid).toBe("MZ0001");
    expect(t.inputRate).toBe(8000);
    expect(t.output).toEqual({ kind: "pcm", rate: 8000 });
    expect(rig.routes.activeCalls).toBe(1);
    client.ws.close();
    await until(() => rig!.routes.activeCalls === 0, "socket gone");
  });

  it("refuses a forged or missing signature with 403 before any WebSocket exists", async () => {
    rig = await startRig({ authToken: AUTH_TOKEN });
    await expect(
      StreamClient.open(rig.wsUrl, { "x-twilio-signature": sign("wrong", rig.wsUrl) }),
    ).rejects.toThrow("HTTP 403");
    await expect(StreamClient.open(rig.wsUrl)).rejects.toThrow("HTTP 403");
    // A signature for the webhook URL does not open the media stream.
    const other = rig.base + "/twilio/voice";
    await expect(
      StreamClient.open(rig.wsUrl, { "x-twilio-signature": sign(AUTH_TOKEN, other) }),
    ).rejects.toThrow("HTTP 403");
    expect(rig.calls.length).toBe(0);
  });
});
