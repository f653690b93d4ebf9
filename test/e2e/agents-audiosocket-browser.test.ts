// Several agents on the transports that connect at once: an AudioSocket call (a client to the
// published framing) is routed by its transport and asks the webhook with its UUID; a browser
// call (the console's socket protocol, spoken from Node) takes the agent the person chose, or
// `default`; each hears its own agent's greeting. A browser call to support is handed to accounts on
// keypad 2 (handoff-fixture.ts), nothing of the conversation carried.
import { rmSync } from "node:fs";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { type Bridge, startBridge } from "../../app/bridge/start.ts";
import {
  BROWSER_CALL_PATH,
  BROWSER_RATE,
  type BrowserServerMessage,
} from "../../bridges/browser/protocol.ts";
import { AsteriskClient, frame, uuidFrame } from "../bridges/audiosocket/client.ts";
import { type AgentsFixture, agentsFixture, until } from "../helpers/agents-fixture.ts";
import { bearer, bridgeFetch } from "../helpers/bridge-token.ts";
import { addHandoff, expectHandedOff, expectVoicesChanged } from "../helpers/handoff-fixture.ts";

let f: AgentsFixture;
let bridge: Bridge;

beforeAll(async () => {
  f = await agentsFixture({ audiosocket: { host: "127.0.0.1", port: 0 } });
  addHandoff(f, "none");
  bridge = await startBridge(f.load(), pino({ level: process.env.E2E_LOG ?? "silent" }));
}, 60_000);
afterAll(async () => {
  await bridge?.close(0);
  await f?.server.close();
  if (f) rmSync(f.dir, { recursive: true, force: true });
});

/** A browser call, the test acting as the page: what arrives "plays" at once and is reported as heard. */
async function browserCall(query: string) {
  const url = `${bridge.url.replace(/^http/, "ws")}${BROWSER_CALL_PATH}${query}`;
  const ws = new WebSocket(url, { headers: bearer(bridge) });
  const heard: Buffer[] = [];
  let receivedMs = 0;
  const report = setInterval(() => {
    if (ws.readyState === WebSocket.OPEN)
      ws.send(JSON.stringify({ type: "played", epoch: 0, ms: receivedMs }));
  }, 100);
  const ready = await new Promise<Extract<BrowserServerMessage, { type: "ready" }>>((resolve, reject) => {
    ws.on("message", (data, binary) => {
      if (binary) {
        heard.push(data as Buffer);
        receivedMs += (data as Buffer).length / 32;
        return;
      }
      const m = JSON.parse(data.toString()) as BrowserServerMessage;
      if (m.type === "ready") resolve(m);
    });
    ws.once("error", reject);
  });
  /** The person hangs up; resolves once the call has ended. */
  const hangUp = async () => {
    clearInterval(report);
    ws.send(JSON.stringify({ type: "hangup" }));
    await until(() => bridge.transcripts.get(ready.callId)?.endReason !== undefined, "the call to end");
    ws.close();
  };
  return { ws, callId: ready.callId, heard, hangUp };
}

const firstWords = (callId: string) => {
  const t = bridge.transcripts.get(callId)?.turns.find((x) => x.role === "assistant");
  return t?.role === "assistant" ? t.generated : undefined;
};

describe("agents on AudioSocket and browser calls", () => {
  it("lists the agents a browser call can reach (the console's choice)", async () => {
    const res = await bridgeFetch(bridge, "/agents");
    expect(await res.json()).toEqual({ agents: ["default", "sales", "support", "broken", "accounts"] });
  });

  it("an AudioSocket call goes to its route's agent, with the webhook's variables", async () => {
    const uuid = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d";
    const client = await AsteriskClient.connect(bridge.audioSocket!.port);
    client.send(uuidFrame(uuid));
    const streaming = client.stream(new Int16Array(8 * 4000), 8000);
    expect(await until(() => firstWords(uuid), "the greeting")).toBe("Support line for gold customers.");
    expect(bridge.transcripts.get(uuid)?.agent).toBe("support");
    const hook = f.server.to("/hook").at(-1)!;
    expect(JSON.parse(hook.body.toString())).toMatchObject({
      callId: uuid,
      transport: "audiosocket",
      params: { uuid },
    });
    await streaming;
    client.send(frame(0x00));
    await until(() => bridge.transcripts.get(uuid)?.endReason !== undefined, "the call to end");
    client.close();
  }, 30_000);

  it.each([
    ["?agent=sales", "sales", "Sales line. Hello browser 127.0.0.1, account ."],
    ["", "default", "This is the default line."],
    ["?agent=nobody", "default", "This is the default line."],
  ])(
    "a browser call %s takes agent %s",
    async (query, agent, greeting) => {
      const call = await browserCall(query);
      expect(await until(() => firstWords(call.callId), "the greeting")).toBe(greeting);
      expect(bridge.transcripts.get(call.callId)?.agent).toBe(agent);
      await call.hangUp();
    },
    30_000,
  );

  it("a browser call to support is handed to accounts (keypad 2): the accounts agent's voice, no history carried", async () => {
    const call = await browserCall("?agent=support");
    const record = () => bridge.transcripts.get(call.callId);
    await until(() => firstWords(call.callId), "the greeting");
    call.ws.send(JSON.stringify({ type: "dtmf", digit: "2" }));
    call.ws.send(JSON.stringify({ type: "dtmf", digit: "#" }));
    await until(
      () => record()?.turns.some((t) => t.role === "assistant" && t.agent === "accounts"),
      "accounts",
    );
    await call.hangUp();
    expectHandedOff(record()!, "Support line for gold customers.", "none");
    const bytes = Buffer.concat(call.heard);
    const pcm = Int16Array.from({ length: bytes.length / 2 }, (_, i) => bytes.readInt16LE(i * 2));
    expectVoicesChanged(pcm, BROWSER_RATE);
  }, 30_000);
});
