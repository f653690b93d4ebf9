// End to end against SIPp, a real SIP peer: its built-in UAC over UDP and TCP, many calls at
// once, RTP from a pcap, and our own scenarios for CANCEL, a missing ACK, hold and transfer.
// SIPp exits 0 only when every call went as its scenario says.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type ServerRig, startServerRig } from "./server-rig.ts";
import { dumpScenario, expectAllCalls, runSipp } from "./sipp.ts";

const SCENARIOS = join(import.meta.dirname, "scenarios");
const E2E_TIMEOUT = 120_000;

let rig: ServerRig | undefined;
afterEach(async () => {
  await rig?.server.close();
  rig = undefined;
});

/** No call left behind: every dialog gone and every RTP port given back. */
async function expectNoLeaks(rig: ServerRig): Promise<void> {
  await expect.poll(() => rig.server.stats.dialogs, { timeout: 10_000 }).toBe(0);
  await expect.poll(() => rig.pool.inUse, { timeout: 10_000 }).toBe(0);
}

describe("SIPp end to end", () => {
  it(
    "built-in uac over UDP: 30 calls, 10 at once",
    async () => {
      rig = await startServerRig();
      expectAllCalls(
        await runSipp({
          scenario: { builtin: "uac" },
          target: rig.target,
          args: ["-r", "20", "-l", "10", "-m", "30"],
        }),
      );
      expect(rig.server.stats.calls).toBe(30);
      expect(rig.made.every((t) => t.endReasons[0] === "caller hung up")).toBe(true);
      expect(rig.made[0]!.info).toMatchObject({ transport: "sip", from: "sipp", to: "service" });
      await expectNoLeaks(rig);
    },
    E2E_TIMEOUT,
  );

  it(
    "built-in uac over TCP (one connection): 30 calls, 10 at once",
    async () => {
      rig = await startServerRig();
      expectAllCalls(
        await runSipp({
          scenario: { builtin: "uac" },
          target: rig.tcpTarget,
          args: ["-t", "t1", "-r", "20", "-l", "10", "-m", "30"],
        }),
      );
      expect(rig.server.stats.calls).toBe(30);
      await expectNoLeaks(rig);
    },
    E2E_TIMEOUT,
  );

  it(
    "built-in uac_pcap: the caller's RTP reaches the port our SDP answer named",
    async () => {
      rig = await startServerRig();
      const file = await dumpScenario("uac_pcap");
      expectAllCalls(await runSipp({ scenario: { file }, target: rig.target, args: ["-m", "2", "-l", "2"] }));
      expect(rig.made).toHaveLength(2);
      for (const t of rig.made) expect(t.endpoint.packets).toBeGreaterThan(100);
      await expectNoLeaks(rig);
    },
    E2E_TIMEOUT,
  );

  it(
    "CANCEL before the answer: 200 and 487, no call, no port kept",
    async () => {
      let release!: () => void;
      rig = await startServerRig();
      rig.pool.gate = new Promise((res) => {
        release = res;
      });
      const result = await runSipp({
        scenario: { file: join(SCENARIOS, "cancel.xml") },
        target: rig.target,
        args: ["-m", "3", "-l", "3"],
      });
      release();
      expectAllCalls(result);
      expect(rig.made).toHaveLength(0);
      await expectNoLeaks(rig);
    },
    E2E_TIMEOUT,
  );

  it(
    "a missing ACK: the 200 is retransmitted, then we give up and send BYE",
    async () => {
      // T1 of 50 ms so 64*T1 is 3.2 s instead of 32 s.
      rig = await startServerRig({ timers: { t1: 50, t2: 400, t4: 500 } });
      expectAllCalls(
        await runSipp({
          scenario: { file: join(SCENARIOS, "no-ack.xml") },
          target: rig.target,
          args: ["-m", "2", "-l", "2"],
        }),
      );
      expect(rig.made.map((t) => t.endReasons)).toEqual([
        ["no ACK for the answer"],
        ["no ACK for the answer"],
      ]);
      await expectNoLeaks(rig);
    },
    E2E_TIMEOUT,
  );

  it(
    "hold and resume by re-INVITE over UDP and TCP: recvonly to their sendonly, then sendrecv",
    async () => {
      rig = await startServerRig();
      const file = join(SCENARIOS, "hold.xml");
      expectAllCalls(await runSipp({ scenario: { file }, target: rig.target, args: ["-m", "2"] }));
      expectAllCalls(
        await runSipp({ scenario: { file }, target: rig.tcpTarget, args: ["-m", "2", "-t", "t1"] }),
      );
      expect(rig.made.map((t) => t.medias.map((m) => m.direction))).toEqual(
        Array(4).fill(["sendrecv", "recvonly", "sendrecv"]),
      );
      await expectNoLeaks(rig);
    },
    E2E_TIMEOUT,
  );

  it(
    "blind transfer: REFER, NOTIFY with sipfrag 200, then our BYE",
    async () => {
      const outcomes: Promise<string>[] = [];
      rig = await startServerRig({
        onCall: (t) => {
          outcomes.push(
            t.transfer("2000").then(
              () => "transferred",
              (e: Error) => e.message,
            ),
          );
        },
      });
      expectAllCalls(
        await runSipp({
          scenario: { file: join(SCENARIOS, "refer.xml") },
          target: rig.target,
          args: ["-m", "2"],
        }),
      );
      expect(await Promise.all(outcomes)).toEqual(["transferred", "transferred"]);
      await expectNoLeaks(rig);
    },
    E2E_TIMEOUT,
  );

  it(
    "OPTIONS probes (as a load balancer sends them): 200, then 503 with Retry-After once draining, while a call in progress ends normally",
    async () => {
      rig = await startServerRig();
      const probe = (status: number): string => {
        const file = join(mkdtempSync(join(tmpdir(), "sipp-options-")), "options.xml");
        writeFileSync(
          file,
          `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="options probe">
  <send retrans="500">
    <![CDATA[
      OPTIONS sip:[remote_ip]:[remote_port] SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
      From: <sip:probe@[local_ip]:[local_port]>;tag=[pid]probe[call_number]
      To: <sip:[remote_ip]:[remote_port]>
      Call-ID: [call_id]
      CSeq: 1 OPTIONS
      Max-Forwards: 70
      Content-Length: 0

    ]]>
  </send>
  <recv response="${status}"/>
</scenario>
`,
        );
        return file;
      };
      expectAllCalls(
        await runSipp({ scenario: { file: probe(200) }, target: rig.target, args: ["-m", "3"] }),
      );
      // A call held up for 3 s (-d: the built-in uac pauses that long before its BYE) spans the drain.
      const call = runSipp({
        scenario: { builtin: "uac" },
        target: rig.target,
        args: ["-m", "1", "-d", "3000"],
      });
      await expect.poll(() => rig!.server.stats.dialogs, { timeout: 20_000 }).toBe(1);
      const drained = rig.server.drain();
      expectAllCalls(
        await runSipp({ scenario: { file: probe(503) }, target: rig.target, args: ["-m", "3"] }),
      );
      expectAllCalls(await call);
      await drained;
      expect(rig.server.stats.dialogs).toBe(0);
    },
    E2E_TIMEOUT,
  );
});
