// Who may call, against SIPp (a real SIP peer on 127.0.0.1): a source outside sip.allowFrom gets
// 403 and nothing is allocated; with sip.users every INVITE is challenged and only the right
// password makes a call; a flood of OPTIONS and INVITEs is dropped and counted while calls go on.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { until } from "../../helpers/until.ts";
import { type ServerRig, startServerRig } from "./server-rig.ts";
import { dumpScenario, expectAllCalls, runSipp } from "./sipp.ts";

const SCENARIOS = join(import.meta.dirname, "scenarios");
const E2E_TIMEOUT = 120_000;

let rig: ServerRig | undefined;
afterEach(async () => {
  await rig?.server.close();
  rig = undefined;
});

describe("sip.allowFrom", () => {
  it(
    "allowing only 10.0.0.0/8, an INVITE and an OPTIONS from 127.0.0.1 get 403; no port, no call",
    async () => {
      rig = await startServerRig({ sip: { allowFrom: ["10.0.0.0/8"] } });
      expectAllCalls(
        await runSipp({
          scenario: { file: join(SCENARIOS, "uac-forbidden.xml") },
          target: rig.target,
          args: ["-m", "3"],
        }),
      );
      expectAllCalls(
        await runSipp({
          scenario: { file: join(SCENARIOS, "uac-forbidden.xml") },
          target: rig.tcpTarget,
          args: ["-t", "t1", "-m", "1"],
        }),
      );
      expect(rig.server.stats.calls).toBe(0);
      expect(rig.pool.opened).toBe(0);
      expect(rig.server.stats.transactions).toBe(0);
      expect(rig.server.stats.refused.not_allowed).toBe(4);
    },
    E2E_TIMEOUT,
  );

  it(
    "the default (loopback and private ranges) takes a call from 127.0.0.1",
    async () => {
      rig = await startServerRig();
      expectAllCalls(await runSipp({ scenario: { builtin: "uac" }, target: rig.target, args: ["-m", "2"] }));
      expect(rig.server.stats.calls).toBe(2);
      expect(rig.server.stats.refused.not_allowed).toBe(0);
    },
    E2E_TIMEOUT,
  );
});

describe("sip.users (digest)", () => {
  it(
    "with the right password the challenged INVITE becomes a call (UDP and TCP)",
    async () => {
      rig = await startServerRig({ sip: { users: [{ user: "alice", password: "correct-horse" }] } });
      const creds = ["-au", "alice", "-ap", "correct-horse"];
      const file = join(SCENARIOS, "uac-auth.xml");
      expectAllCalls(await runSipp({ scenario: { file }, target: rig.target, args: [...creds, "-m", "3"] }));
      expectAllCalls(
        await runSipp({ scenario: { file }, target: rig.tcpTarget, args: [...creds, "-t", "t1", "-m", "2"] }),
      );
      expect(rig.server.stats.calls).toBe(5);
      expect(rig.server.stats.refused.unauthenticated).toBe(5);
      expect(rig.server.stats.refused.bad_credentials).toBe(0);
    },
    E2E_TIMEOUT,
  );

  it(
    "a wrong password gets 403 after the challenge; no credentials at all never get past 401",
    async () => {
      rig = await startServerRig({ sip: { users: [{ user: "alice", password: "correct-horse" }] } });
      expectAllCalls(
        await runSipp({
          scenario: { file: join(SCENARIOS, "uac-auth-forbidden.xml") },
          target: rig.target,
          args: ["-au", "alice", "-ap", "battery staple", "-m", "2"],
        }),
      );
      expect(rig.server.stats.refused.bad_credentials).toBe(2);
      // SIPp's own UAC has no credentials: its INVITE's 401 is not what it expects, so it fails.
      const plain = await runSipp({ scenario: { builtin: "uac" }, target: rig.target, args: ["-m", "1"] });
      expect(plain.code).not.toBe(0);
      expect(plain.errors + plain.output).toMatch(/401/);
      expect(rig.server.stats.calls).toBe(0);
      expect(rig.pool.opened).toBe(0);
    },
    E2E_TIMEOUT,
  );
});

describe("per-source rate limit", () => {
  it(
    "a scanner's flood of OPTIONS and INVITEs is refused or dropped, counted, while 20 calls go on",
    async () => {
      rig = await startServerRig({ sip: { rateLimit: 20, allowFrom: ["127.0.0.1/32"] } });
      const pcap = await dumpScenario("uac_pcap");
      const abort = new AbortController();
      // 127.0.0.2 floods (-i sets SIPp's source address); 127.0.0.1 calls.
      const flood = runSipp({
        scenario: { file: join(SCENARIOS, "flood.xml") },
        target: rig.target,
        args: ["-i", "127.0.0.2", "-r", "300", "-m", "3000", "-default_behaviors", "none"],
        timeoutS: 30,
        signal: abort.signal,
      });
      const server = rig.server;
      const calls = await (async () => {
        try {
          // The calls go on during the flood: once it is under way (its source's bucket emptied),
          // and the flood until it is well past it (a busy machine starts SIPp late).
          await until(() => server.stats.refused.rate_limited > 0, "the flood to be rate-limited");
          const done = await runSipp({
            scenario: { file: pcap },
            target: rig.target,
            args: ["-r", "10", "-l", "20", "-m", "20"],
          });
          await until(
            () => server.stats.refused.rate_limited > 500,
            "500 of the flood's requests rate-limited",
          );
          return done;
        } finally {
          abort.abort();
          await flood;
        }
      })();
      expectAllCalls(calls);
      expect(rig.server.stats.calls).toBe(20);
      const { refused } = rig.server.stats;
      // The bucket holds 4 s at 20/s: 80 plus 20 a second are answered 403, the rest dropped.
      expect(refused.rate_limited).toBeGreaterThan(500);
      expect(refused.not_allowed).toBeGreaterThanOrEqual(80);
      expect(refused.not_allowed).toBeLessThan(refused.rate_limited);
    },
    E2E_TIMEOUT,
  );
});
