// A caller on TCP that closes its connection after the call is set up (some PBXes open one per
// transaction): our BYE must go out on a new connection to its Contact, and be answered there.
import { connect, createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { header, type SipRequest } from "../../../bridges/sip/message.ts";
import { parseMessage } from "../../../bridges/sip/parse.ts";
import { makeResponse, serialize } from "../../../bridges/sip/serialize.ts";
import { SipStreamFramer } from "../../../bridges/sip/stream-framer.ts";
import { OFFER } from "./core-rig.ts";
import { type ServerRig, startServerRig } from "./server-rig.ts";

let rig: ServerRig | undefined;
let phone: Server | undefined;
afterEach(async () => {
  await rig?.server.close();
  await new Promise((r) => (phone ? phone.close(r) : r(undefined)));
  rig = undefined;
  phone = undefined;
});

/** Every SIP message that arrives on a socket, parsed. */
function messages(socket: Socket, onMessage: (m: ReturnType<typeof parseOk>) => void): void {
  const framer = new SipStreamFramer();
  socket.on("data", (chunk: Buffer) => {
    for (const ev of framer.push(chunk)) if (ev.type === "message") onMessage(parseOk(ev.bytes));
  });
}

function parseOk(bytes: Buffer) {
  const r = parseMessage(bytes);
  if (!r.ok) throw new Error(r.error);
  return r.msg;
}

describe("SIP over TCP", () => {
  it("sends BYE on a new connection to the caller's Contact once its own connection has closed", async () => {
    rig = await startServerRig();
    // The phone's own listening socket, named in its Contact.
    const byes: SipRequest[] = [];
    phone = createServer((socket) =>
      messages(socket, (m) => {
        if (m.kind !== "request") return;
        byes.push(m);
        socket.write(serialize(makeResponse(m, 200)));
      }),
    );
    await new Promise<void>((resolve) => phone!.listen(0, "127.0.0.1", resolve));
    const phonePort = (phone.address() as { port: number }).port;

    const call = connect(rig.server.tcpPort, "127.0.0.1");
    const got: ReturnType<typeof parseOk>[] = [];
    messages(call, (m) => got.push(m));
    const common = [
      `From: <sip:phone@127.0.0.1>;tag=ph1`,
      "Call-ID: tcp-reconnect-1",
      `Contact: <sip:phone@127.0.0.1:${phonePort};transport=tcp>`,
      "Max-Forwards: 70",
    ];
    call.write(
      [
        `INVITE sip:agent@127.0.0.1:${rig.server.tcpPort};transport=tcp SIP/2.0`,
        `Via: SIP/2.0/TCP 127.0.0.1:${call.localPort ?? 9};branch=z9hG4bKtcpinv`,
        "To: <sip:agent@127.0.0.1>",
        "CSeq: 1 INVITE",
        ...common,
        "Content-Type: application/sdp",
        `Content-Length: ${OFFER.length}`,
        "",
        OFFER,
      ].join("\r\n"),
    );
    await expect.poll(() => got.find((m) => m.kind === "response" && m.status === 200)).toBeDefined();
    const ok = got.find((m) => m.kind === "response" && m.status === 200)!;
    call.write(
      [
        `ACK sip:agent@127.0.0.1:${rig.server.tcpPort};transport=tcp SIP/2.0`,
        `Via: SIP/2.0/TCP 127.0.0.1:9;branch=z9hG4bKtcpack`,
        `To: ${header(ok, "to")}`,
        "CSeq: 1 ACK",
        ...common,
        "Content-Length: 0",
        "",
        "",
      ].join("\r\n"),
    );
    call.end();
    await expect.poll(() => rig!.server.tcpConnections).toBe(0);

    await rig.made[0]!.hangUp("goodbye");
    expect(byes.map((b) => [b.method, b.uri])).toEqual([
      ["BYE", `sip:phone@127.0.0.1:${phonePort};transport=tcp`],
    ]);
    expect(header(byes[0]!, "via")).toMatch(/^SIP\/2\.0\/TCP /);
    expect(rig.server.stats.dialogs).toBe(0);
  });
});
