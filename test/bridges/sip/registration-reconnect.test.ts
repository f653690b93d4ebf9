// Registering again after a network change: the TCP connection a registration rides on is dropped
// by the far end (real Kamailio closing idle connections after 2 s, as its tcp_connection_lifetime,
// a NAT or a firewall does), and the bridge registers again at once on a new connection, long
// before its refresh is due (the binding was granted for an hour). Without that, the registrar
// would keep a binding it cannot reach us through until the refresh, and calls would be lost.
// And a registrar that is not up yet when the bridge starts: the refused connection is a failure
// said at once and retried, not a REGISTER left waiting the 32 s of Timer F for an answer.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../helpers/free-port.ts";
import { until } from "../../helpers/until.ts";
import { KamailioRegistrar } from "./kamailio-registrar.ts";
import { type ServerRig, startServerRig } from "./server-rig.ts";

const USER = "1001";
const PASSWORD = "s3cret-pw";
const HOUR_S = 3600;

let dir: string;
const kamailios: KamailioRegistrar[] = [];
const rigs: ServerRig[] = [];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "vb-sip-rereg-"));
});

afterAll(async () => {
  for (const rig of rigs) await rig.server.close();
  for (const kamailio of kamailios) await kamailio.stop();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Kamailio's "REG saved" lines, once there is one: it logs the binding after its 200 OK has gone,
 * so the bridge may call itself registered before the line is written.
 */
function savedLines(kamailio: { lines(text: string): string[] }): Promise<string[]> {
  return until(() => {
    const lines = kamailio.lines("REG saved");
    return lines.length > 0 ? lines : undefined;
  }, "Kamailio's log of the registration");
}

/** The source port of a "REG saved … from tcp:127.0.0.1:PORT" line: which connection carried it. */
function sourcePort(line: string): number {
  const m = /from (\w+):[\d.]+:(\d+)/.exec(line);
  if (!m) throw new Error(`no source in ${JSON.stringify(line)}`);
  expect(m[1]).toBe("tcp");
  return Number(m[2]);
}

/** A bridge registering USER over TCP with the registrar on `port`, asking for `expires` seconds. */
async function registering(port: number, expires: number): Promise<ServerRig> {
  const rig = await startServerRig({
    sip: {
      registrations: [
        { user: USER, password: PASSWORD, registrar: { host: "127.0.0.1", port }, transport: "tcp", expires },
      ],
    },
    // Retries after 1–2 s, and the route looked at every 250 ms (30 s by default): the tests are quick.
    registrationTiming: { backoffMs: { first: 1000, max: 2000 }, watchMs: 250 },
  });
  rigs.push(rig);
  return rig;
}

describe("a registration whose TCP connection is dropped", () => {
  it("registers again on a new connection at once, not at the refresh an hour away", async () => {
    const port = await freePort();
    const kamailio = await KamailioRegistrar.start(
      { dir, port, user: USER, password: PASSWORD, maxExpiresS: HOUR_S, tcpIdleS: 2 },
      "idle-close",
    );
    kamailios.push(kamailio);
    const rig = await registering(port, HOUR_S);
    const server = rig.server;
    const status = await until(
      () => server.registrations().find((r) => r.state === "registered"),
      "registered",
    );
    expect(status.expiresS).toBe(HOUR_S);
    const first = await savedLines(kamailio);
    expect(first).toHaveLength(1);
    expect(first[0]).toContain(`expires ${HOUR_S}`);

    // Kamailio drops the idle connection after 2 s: a second binding, from another connection.
    // Kamailio's idle check and the bridge's backoff take ~10 s a round here; a loaded machine more.
    const again = await until(() => kamailio.lines("REG saved")[1], "a registration after the drop", 40_000);
    expect(sourcePort(again)).not.toBe(sourcePort(first[0]!));
    expect(again).toContain(`expires ${HOUR_S}`);
    // Each new connection is challenged afresh or carries the nonce it has; either way the
    // registrar accepted it, and the bridge says it is registered for the hour again.
    await until(() => server.registrations()[0]?.state === "registered" || undefined, "registered again");
    expect(server.registrations()[0]).toMatchObject({ state: "registered", expiresS: HOUR_S });

    // And again after the next drop: each time on a connection of its own.
    const third = await until(
      () => kamailio.lines("REG saved")[2],
      "a registration after the next drop",
      40_000,
    );
    const ports = new Set([first[0]!, again, third].map(sourcePort));
    expect(ports.size).toBe(3);
  }, 120_000);
});

describe("a registrar that is not listening yet", () => {
  it("says the connection was refused, retries, and registers once the registrar is up", async () => {
    const port = await freePort();
    const rig = await registering(port, 60);
    // Default SIP timers: before the fix the refused REGISTER waited 32 s (Timer F), past this wait.
    const failed = await until(
      () => rig.server.registrations().find((r) => r.state === "failed"),
      "the refused connection reported",
    );
    expect(failed.detail).toMatch(
      /^no way to the registrar: connect ECONNREFUSED 127\.0\.0\.1:\d+; retrying in \d+ s$/,
    );
    const kamailio = await KamailioRegistrar.start(
      { dir, port, user: USER, password: PASSWORD, maxExpiresS: 60 },
      "late",
    );
    kamailios.push(kamailio);
    const status = await until(
      () => rig.server.registrations().find((r) => r.state === "registered"),
      "registered once the registrar is up",
    );
    expect(status.expiresS).toBe(60);
    expect(await savedLines(kamailio)).toHaveLength(1);
  }, 90_000);
});
