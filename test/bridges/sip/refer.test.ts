// Blind transfer on virtual time: REFER, the NOTIFYs that follow, and how each outcome ends.
import { describe, expect, it } from "vitest";
import { header } from "../../../bridges/sip/message.ts";
import { referTarget } from "../../../bridges/sip/refer.ts";
import { answer, coreRig, request } from "./core-rig.ts";

async function connected() {
  const r = coreRig();
  const { toTag } = await r.call();
  r.send(request("ACK", { toTag }));
  const control = r.media.made[0]!.control;
  const notify = (cseq: number, frag: string, state = "active;expires=60") =>
    r.send(
      Buffer.from(
        request("NOTIFY", { toTag, cseq, extra: ["Event: refer", `Subscription-State: ${state}`] })
          .toString()
          .replace(
            "Content-Length: 0\r\n\r\n",
            `Content-Type: message/sipfrag\r\nContent-Length: ${frag.length}\r\n\r\n${frag}`,
          ),
      ),
    );
  return { r, toTag, control, notify };
}

describe("referTarget", () => {
  it("keeps a SIP URI, puts a number on the caller's host, refuses anything else", () => {
    expect(referTarget("sip:sales@pbx.example", "sip:+1555@carrier.example")).toBe("sip:sales@pbx.example");
    expect(referTarget("+1 (555) 010-2000", "sip:+1555@carrier.example:5080")).toBe(
      "sip:+15550102000@carrier.example",
    );
    expect(referTarget("tel:1234", "sip:x@10.1.1.1")).toBe("sip:1234@10.1.1.1");
    expect(() => referTarget("the sales desk", "sip:x@h")).toThrow(/neither a SIP URI nor a phone number/);
  });
});

describe("blind transfer", () => {
  it("REFERs, answers each NOTIFY 200, resolves on a sipfrag 200 and then hangs up", async () => {
    const { r, control, notify } = await connected();
    const done = control.transfer("2000");
    const refer = r.requests("REFER")[0]!.msg;
    expect(header(refer, "refer-to")).toBe("<sip:2000@carrier.example>");
    expect(refer.uri).toBe("sip:caller@192.0.2.9:5070");
    expect(header(refer, "to")).toMatch(/tag=peer/);
    r.send(answer(refer, 202, "Accepted"));
    notify(1, "SIP/2.0 100 Trying\r\n");
    notify(2, "SIP/2.0 180 Ringing\r\n");
    expect(r.requests("BYE")).toHaveLength(0);
    notify(3, "SIP/2.0 200 OK\r\n", "terminated;reason=noresource");
    await expect(done).resolves.toBeUndefined();
    expect(r.responses(200, "NOTIFY")).toHaveLength(3);
    expect(r.requests("BYE")).toHaveLength(1);
    expect(r.media.made[0]!.endReasons).toEqual(["transferred"]);
  });

  it("rejects with the failure a NOTIFY reports, and the call stays up", async () => {
    const { r, control, notify } = await connected();
    const done = control.transfer("sip:busy@pbx.example");
    r.send(answer(r.requests("REFER")[0]!.msg, 202, "Accepted"));
    notify(1, "SIP/2.0 486 Busy Here\r\n", "terminated");
    await expect(done).rejects.toThrow("transfer to sip:busy@pbx.example failed: 486 Busy Here");
    expect(r.requests("BYE")).toHaveLength(0);
    expect(r.core.stats.dialogs).toBe(1);
  });

  it("rejects when the REFER itself is refused", async () => {
    const { r, control } = await connected();
    const done = control.transfer("2000");
    r.send(answer(r.requests("REFER")[0]!.msg, 603, "Decline"));
    await expect(done).rejects.toThrow("refused: 603 Decline");
  });

  it("rejects when no NOTIFY follows the 202 within 64*T1", async () => {
    const { r, control } = await connected();
    const done = control.transfer("2000");
    const settled = done.catch((e: Error) => e.message);
    r.send(answer(r.requests("REFER")[0]!.msg, 202, "Accepted"));
    await r.clock.advanceAsync(32_000, 1000);
    expect(await settled).toMatch(/no NOTIFY within 32 s/);
  });

  it("rejects when the caller hangs up first, and a NOTIFY with no transfer gets 481", async () => {
    const { r, toTag, control, notify } = await connected();
    notify(1, "SIP/2.0 200 OK\r\n");
    expect(r.responses(481, "NOTIFY")).toHaveLength(1);
    const done = control.transfer("2000");
    r.send(request("BYE", { toTag, cseq: 5 }));
    await expect(done).rejects.toThrow(/abandoned: caller hung up/);
  });
});
