// A request that carries a W3C traceparent (the bridge sends one when it traces its calls) has its
// trace id on the service's log lines about it; one without, or with a malformed one, has none.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_PREFIX, PATHS } from "../../src/api/types/paths.ts";
import { type LocalService, startLocalService } from "../../src/service/index.ts";
import { until } from "../helpers/until.ts";

interface LogLine {
  msg: string;
  trace_id?: string;
  reqId?: string;
}

const lines: LogLine[] = [];
let dir: string;
let svc: LocalService;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "svc-traceparent-"));
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split("\n")) if (l) lines.push(JSON.parse(l) as LogLine);
      done();
    },
  });
  svc = await startLocalService({ dataDir: dir, apiKeys: ["k"], logger: pino({ level: "debug" }, sink) });
});
afterAll(async () => {
  await svc.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A chat request the service refuses (no model, no messages): its refusal is logged at debug. */
async function refused(traceparent: string | undefined): Promise<LogLine> {
  const before = lines.length;
  const res = await fetch(`${svc.url}${API_PREFIX}${PATHS.chatCompletions}`, {
    method: "POST",
    headers: {
      authorization: "Bearer k",
      "content-type": "application/json",
      ...(traceparent ? { traceparent } : {}),
    },
    body: "{}",
  });
  expect(res.status).toBe(400);
  return until(
    () => lines.slice(before).find((l) => l.msg === "request refused"),
    "the refusal's log line",
    5000,
  );
}

describe("the service's log lines about a traced request", () => {
  it("carry the trace id of its traceparent", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    expect((await refused(`00-${traceId}-00f067aa0ba902b7-01`)).trace_id).toBe(traceId);
  });

  it("carry none without one, or with a malformed one", async () => {
    expect(await refused(undefined)).not.toHaveProperty("trace_id");
    expect(await refused("00-not-a-trace-01")).not.toHaveProperty("trace_id");
  });
});
