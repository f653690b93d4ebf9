// Two bridges on one real PostgreSQL work the same campaign: one in this process, one its own
// process, SIGKILLed while it has calls ringing. Rows are taken with row locks, so no row is
// dialled by both; the killed bridge's rows are filed as `lost` once their lease runs out and the
// other bridge calls them again. The trunk's log is the callees' side: no number got more INVITEs
// than the store counts attempts, and every attempt not lost got its call.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Bridge, startBridge } from "../../app/bridge/start.ts";
import { exited, spawnNode, waitForLine } from "../../bench/lib/calls-procs.ts";
import { Postgres } from "../../bench/lib/postgres-server.ts";
import { loadConfig } from "../../src/config/config.ts";
import { Baresip } from "../helpers/baresip.ts";
import { freePort } from "../helpers/free-port.ts";
import { until } from "../helpers/until.ts";
import { loopbackSipEnv } from "../outbound/bridge-env.ts";
import { quietWav } from "../outbound/callees.ts";
import { KamailioTrunk } from "../outbound/kamailio-trunk.ts";

const TOKEN = "campaign-pg-token-0123456789";
const dir = mkdtempSync(join(tmpdir(), "campaign-pg-"));
const NUMBERS = ["3001", "3002", "3003", "3004", "3005", "3006"];
let server: Postgres;
let url: string;
let trunk: KamailioTrunk;
let phones: Baresip[] = [];
let a: Bridge;
const cleanups: (() => unknown)[] = [];

function env(instance: string, rtpPorts: string, trunkPort: number): Record<string, string> {
  return {
    ...loopbackSipEnv({ token: TOKEN, rtpPorts, dir: join(dir, instance) }),
    DATABASE_URL: url,
    BRIDGE_INSTANCE: instance,
    STORE_LOST_AFTER_SECONDS: "2",
    CAMPAIGNS_LEASE_SECONDS: "3",
    SIP_OUTBOUND_PROXY: `sip:127.0.0.1:${trunkPort}`,
    SIP_OUTBOUND_USER: "bridge",
    SIP_OUTBOUND_PASSWORD: "trunk-secret",
    SIP_OUTBOUND_FROM: "+15550100",
    OUTBOUND_CALLS_PER_SECOND: "20",
    // Each bridge may have two calls at once: the campaign's four are shared between them.
    OUTBOUND_MAX_CONCURRENT: "2",
  };
}

beforeAll(async () => {
  server = await Postgres.start();
  url = await server.database("campaigns");
  const quiet = quietWav(dir);
  // Phones nobody picks up: each call rings until the ring timeout (5 s).
  phones = await Promise.all(
    ["n1", "n2"].map((user) =>
      Baresip.start({ codec: "pcmu", wav: quiet, user, accountParams: ";answermode=manual" }),
    ),
  );
  const trunkPort = await freePort();
  trunk = await KamailioTrunk.start({
    dir,
    port: trunkPort,
    user: "bridge",
    password: "trunk-secret",
    callees: Object.fromEntries(
      NUMBERS.map((n, i) => [n, { user: i < 3 ? "n1" : "n2", port: phones[i < 3 ? 0 : 1]!.sipPort }]),
    ),
  });
  a = await startBridge(
    loadConfig({ env: env("bridge-a", "36800-36899", trunkPort) }),
    pino({ level: process.env.E2E_LOG ?? "silent" }),
  );
  cleanups.push(() => a.close(0));
  const log = join(dir, "bridge-b.log");
  const b = spawnNode(
    ["app/cli.ts", "start"],
    { ...process.env, ...env("bridge-b", "36900-36999", trunkPort), LOG_FORMAT: "json" },
    log,
  );
  cleanups.push(() => b.kill("SIGKILL"));
  await waitForLine(log, /"ready: how to reach the agent"/, 60_000, b);
  killB = async () => {
    b.kill("SIGKILL");
    await exited(b, 10_000);
  };
}, 120_000);
let killB: () => Promise<void>;

afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await Promise.all([...phones.map((p) => p.stop()), trunk?.stop()]);
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

// biome-ignore lint/suspicious/noExplicitAny: test reads of JSON answers
type Json = any;

async function api(method: string, path: string, body?: unknown): Promise<Json> {
  const res = await fetch(`${a.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body ? { "content-type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return res.json();
}

async function attempts(): Promise<
  { number: string; attempt: number; instance: string; outcome: string | null }[]
> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const r = await client.query(
      "SELECT r.number, a.attempt, a.instance, a.outcome FROM campaign_attempts a JOIN campaign_rows r USING (campaign_id, row_no) ORDER BY r.number, a.attempt",
    );
    return r.rows;
  } finally {
    await client.end();
  }
}

/** Calls the trunk relayed, per number called (an INVITE's retransmission is the same call). */
function trunkInvites(): Record<string, number> {
  const calls = new Map<string, Set<string>>();
  for (const line of trunk.lines()) {
    const m = /TRUNK INVITE (\d+) .* call (\S+)/.exec(line);
    if (m) calls.set(m[1]!, (calls.get(m[1]!) ?? new Set()).add(m[2]!));
  }
  return Object.fromEntries([...calls].map(([number, ids]) => [number, ids.size]));
}

describe("two bridges on one PostgreSQL working one campaign", () => {
  it("call every row exactly once per attempt; the killed bridge's rows are called again by the other", {
    timeout: 120_000,
  }, async () => {
    const created = await api("POST", "/campaigns", {
      rows: NUMBERS.map((number) => ({ number })),
      callingHours: { days: "mon-sun", from: "00:00", to: "24:00" },
      concurrency: 4,
      pacePerMinute: 600,
      ringTimeoutS: 5,
      retry: {
        "no-answer": { attempts: 1 },
        busy: { attempts: 1 },
        failed: { attempts: 1 },
        lost: { attempts: 3, delayS: 0 },
      },
    });
    const id = created.campaign.id as string;
    // Both bridges take rows; once B has a call ringing at a callee, it is killed.
    await until(async () => {
      const seen = trunkInvites();
      return (await attempts()).some(
        (x) => x.instance === "bridge-b" && x.outcome === null && (seen[x.number] ?? 0) > 0,
      );
    }, "B's call ringing");
    await killB();
    const done = await until(
      async () => {
        const c = await api("GET", `/campaigns/${id}`);
        return c.status === "completed" ? c : undefined;
      },
      "the campaign to complete on A",
      90_000,
      250,
    );
    expect(done.counts.byStatus).toEqual({ done: NUMBERS.length });
    const all = await attempts();
    const lost = all.filter((x) => x.outcome === "lost");
    expect(lost.length).toBeGreaterThan(0);
    expect(lost.every((x) => x.instance === "bridge-b")).toBe(true);
    // Every lost attempt was followed by another, by A.
    for (const l of lost)
      expect(all.find((x) => x.number === l.number && x.attempt === l.attempt + 1)?.instance).toBe(
        "bridge-a",
      );
    // What the callees' trunk saw: per number never more INVITEs than attempts (none called twice
    // for one), and a call for every attempt that was not lost. A lost attempt of B's may have no
    // call: B can die between taking a row and dialling it.
    const invites = trunkInvites();
    for (const number of NUMBERS) {
      const made = all.filter((x) => x.number === number);
      const lostOnes = made.filter((x) => x.outcome === "lost").length;
      expect(invites[number] ?? 0, number).toBeLessThanOrEqual(made.length);
      expect(invites[number] ?? 0, number).toBeGreaterThanOrEqual(made.length - lostOnes);
    }
  });
});
