// The bridge's do-not-call list: a file of numbers read at start and again when it changes, asked
// when each call is placed. A campaign's row on it is skipped (the scheduler's tests); POST /calls
// to a number on it is refused 403 before any carrier is asked, and a number added to the file
// while the bridge runs is refused from then on (test/campaigns/sip-campaign.test.ts: the same
// through a real bridge and trunk).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify from "fastify";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { registerOutboundRoutes } from "../../app/http/outbound-routes.ts";
import { AgentDirectory } from "../../src/agents/directory.ts";
import { DoNotCallList } from "../../src/campaigns/do-not-call.ts";
import { loadConfig } from "../../src/config/config.ts";
import { OutboundCalls } from "../../src/outbound/calls.ts";
import type { Dialer } from "../../src/outbound/dialer.ts";
import { DialLimits } from "../../src/outbound/limits.ts";
import { TranscriptStore } from "../../src/records/call-record.ts";

const log = pino({ level: "silent" });
let dir: string;
let file: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "dnc-"));
  file = join(dir, "do-not-call.txt");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("the do-not-call list", () => {
  it("reads numbers one a line, comments and separators aside, and again once the file changes", async () => {
    writeFileSync(file, "# never call these\n+1 (555) 01-01\n+15550102  # a note\n\n");
    const list = await DoNotCallList.open(file, log, 60_000);
    try {
      expect([list.has("+15550101"), list.has("+1 555 0102"), list.has("+15550103")]).toEqual([
        true,
        true,
        false,
      ]);
      writeFileSync(file, "+15550103\n");
      await list.refresh();
      expect([list.has("+15550101"), list.has("+15550103")]).toEqual([false, true]);
    } finally {
      list.close();
    }
  });

  it("refuses to start on a file it cannot read, and keeps the last list when the file goes", async () => {
    await expect(DoNotCallList.open(join(dir, "missing.txt"), log)).rejects.toThrow(/ENOENT/);
    writeFileSync(file, "+15550101\n");
    const list = await DoNotCallList.open(file, log, 60_000);
    try {
      rmSync(file);
      await list.refresh();
      expect(list.has("+15550101")).toBe(true);
    } finally {
      list.close();
    }
  });

  it("holds for POST /calls: a number on it is refused 403, the carrier never asked", async () => {
    writeFileSync(file, "+15550101\n");
    const list = await DoNotCallList.open(file, log, 60_000);
    const config = loadConfig({ env: { OUTBOUND_CALLS_PER_SECOND: "100" } });
    const dialled: string[] = [];
    const ringing: Dialer = (request) => {
      dialled.push(request.to);
      return { cancel: () => {} };
    };
    const calls = new OutboundCalls({
      config: () => config.outbound,
      dialers: () => ({ sip: ringing }),
      agents: () => new AgentDirectory(config),
      doNotCall: (to) => list.has(to),
      limits: new DialLimits(config.outbound.maxConcurrent, config.outbound.callsPerSecond),
      events: new TranscriptStore(undefined),
      startSession: () => ({ end: () => {} }),
      tts: () => {
        throw new Error("not used");
      },
      log,
    });
    const http = Fastify();
    registerOutboundRoutes(http, calls);
    const post = (to: string) => http.inject({ method: "POST", url: "/calls", payload: { to, via: "sip" } });
    try {
      const refused = await post("+1 555 0101");
      expect(refused.statusCode).toBe(403);
      expect(refused.json().error).toMatchObject({ type: "do_not_call", param: "to" });
      expect((await post("+15550102")).statusCode).toBe(202);
      // Added while the bridge runs: refused from the next read of the file on.
      writeFileSync(file, "+15550101\n+15550102\n");
      await list.refresh();
      expect((await post("+15550102")).statusCode).toBe(403);
      expect(dialled).toEqual(["+15550102"]);
    } finally {
      list.close();
      await http.close();
    }
  });
});
