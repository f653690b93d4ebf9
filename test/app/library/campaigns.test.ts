// bridge.campaigns: /campaigns from code, on the embedded SQLite store. A campaign that starts
// tomorrow is created whole (its bad rows reported by line), read with its counts, paused,
// resumed, changed, given more rows (a duplicate refused), cancelled, and its results read as
// CSV (and its calls, none); bad settings reject with a CampaignError naming the field, a list with no good row creates
// nothing.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CampaignError, createBridge, type VoiceBridge } from "../../../app/index.ts";

let dir: string;
let bridge: VoiceBridge;
const tomorrow = new Date(Date.now() + 86_400_000).toISOString();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vb-campaigns-"));
  bridge = await createBridge({
    env: {},
    server: { host: "127.0.0.1", port: 0 },
    sip: { host: "127.0.0.1", port: 0, rtpPorts: "36920-36939" },
    outbound: { sip: { proxy: "sip:127.0.0.1:9;transport=tcp", from: "+15557770000" } },
    local: { dataDir: join(dir, "data") },
    log: { level: "silent" },
  });
}, 60_000);

afterAll(async () => {
  await bridge?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("bridge.campaigns", () => {
  it("refuses bad settings and a list with no good row, naming the field, creating nothing", async () => {
    const bad = bridge.campaigns.create({ pacePerMinute: -1 }, { csv: "number\n+15550100\n" });
    await expect(bad).rejects.toBeInstanceOf(CampaignError);
    await expect(bad).rejects.toMatchObject({ status: 400, problems: [{ field: "pacePerMinute" }] });
    await expect(
      bridge.campaigns.create({ agent: "nobody" }, { csv: "number\n+15550100\n" }),
    ).rejects.toMatchObject({
      problems: [{ field: "agent" }],
    });
    await expect(bridge.campaigns.create({ timeZone: "Mars/Base" }, { rows: [] })).rejects.toMatchObject({
      problems: [{ field: "timeZone" }],
    });
    await expect(bridge.campaigns.create({}, { csv: "number\nnope\n" })).rejects.toMatchObject({
      problems: [{ line: 2, field: "number" }],
    });
    await expect(
      bridge.campaigns.create({}, { csv: "number\n+15550100\nbad\n" }, { strict: true }),
    ).rejects.toMatchObject({
      problems: [{ line: 3, field: "number" }],
    });
    expect(await bridge.campaigns.list()).toEqual([]);
  });

  it("creates, reads, pauses, resumes, changes, adds rows, cancels, and gives the results", async () => {
    const created = await bridge.campaigns.create(
      { name: "renewals", startAt: tomorrow, pacePerMinute: 10 },
      { csv: "number,name\n+15550100,Ada\n+15550101,Bob\n+15550100,Ada again\n" },
    );
    expect(created.accepted).toBe(2);
    expect(created.rejected).toEqual([{ line: 4, field: "number", message: "+15550100 duplicates line 2" }]);
    const id = created.campaign.id;
    expect(created.campaign).toMatchObject({
      name: "renewals",
      status: "running",
      counts: { rows: 2, attempts: 0, byStatus: { pending: 2 } },
    });
    expect((await bridge.campaigns.pause(id)).status).toBe("paused");
    await expect(bridge.campaigns.pause(id)).resolves.toMatchObject({ status: "paused" });
    expect((await bridge.campaigns.resume(id)).status).toBe("running");
    expect(
      (await bridge.campaigns.update(id, { pacePerMinute: 120, concurrency: 2 })).settings,
    ).toMatchObject({
      pacePerMinute: 120,
      concurrency: 2,
    });
    await expect(bridge.campaigns.update(id, { concurrency: 0 })).rejects.toMatchObject({
      problems: [{ field: "concurrency" }],
    });
    const added = await bridge.campaigns.addRows(id, {
      rows: [{ number: "+15550101" }, { number: "+15550102" }],
    });
    expect(added.accepted).toBe(1);
    expect(added.rejected).toEqual([
      { line: 1, field: "number", message: "+15550101 is already in the campaign" },
    ]);
    const canceled = await bridge.campaigns.cancel(id);
    expect(canceled).toMatchObject({ status: "canceled", counts: { rows: 3, byStatus: { canceled: 3 } } });
    await expect(bridge.campaigns.resume(id)).rejects.toMatchObject({ status: 409 });
    const csv = await bridge.campaigns.results(id);
    expect(csv.split("\r\n")[0]).toBe(
      "number,timezone,status,outcome,attempts,last_attempt_at,call_ids,reason,var.name,summary",
    );
    expect(csv).toContain("+15550100,,canceled,canceled,0,,,,Ada,");
    await expect(bridge.campaigns.results("cmp-none")).rejects.toMatchObject({ status: 404 });
    // Nothing was dialled (it starts tomorrow): no calls; a bad limit and an unknown campaign refused.
    await expect(bridge.campaigns.calls(id)).resolves.toEqual([]);
    await expect(bridge.campaigns.calls(id, { limit: 0 })).rejects.toMatchObject({
      status: 400,
      problems: [{ field: "limit" }],
    });
    await expect(bridge.campaigns.calls("cmp-none")).rejects.toMatchObject({ status: 404 });
  });
});
