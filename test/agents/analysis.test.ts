// The post-call analysis: the request asks for the declared fields by JSON Schema, the answer is
// checked against the declared types, and the local service's scripted engine answers it in JSON
// mode (E1 response_format json_object) over a real socket.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { analyseCall, readAnalysis } from "../../src/agents/analysis.ts";
import { SvcClient } from "../../src/api/client.ts";
import { analysisSchema } from "../../src/config/agent.ts";
import type { TurnView } from "../../src/records/call-record.ts";
import { type LocalService, startLocalService } from "../../src/service/index.ts";

const plan = analysisSchema.parse({
  summary: true,
  fields: {
    line: { type: "string", description: "which line the caller wanted", enum: ["sales", "support"] },
    order_count: { type: "integer", description: "how many orders the caller mentioned" },
    wants_callback: { type: "boolean", description: "the caller asked to be called back" },
  },
});

const turns: TurnView[] = [
  {
    role: "assistant",
    text: "Thanks for calling.",
    generated: "Thanks for calling.",
    heard: "Thanks for calling.",
    interrupted: false,
    tools: [],
    metrics: {},
    at: "2026-01-01T00:00:00Z",
  },
  { role: "user", text: "I need support with my bike", source: "speech", at: "2026-01-01T00:00:02Z" },
];

describe("reading an analysis", () => {
  it("takes answers of the declared types, null for what the call did not tell", () => {
    expect(
      readAnalysis(
        plan,
        JSON.stringify({ summary: " A caller. ", fields: { line: "sales", order_count: 2 } }),
      ),
    ).toEqual({
      status: "done",
      summary: "A caller.",
      fields: { line: "sales", order_count: 2, wants_callback: null },
    });
  });

  it.each([
    ["not json", /not JSON/],
    ["[1]", /not a JSON object/],
    [JSON.stringify({ fields: {} }), /summary: expected a non-empty string/],
    [
      JSON.stringify({ summary: "s", fields: { line: "billing" } }),
      /fields\.line: expected one of sales, support/,
    ],
    [
      JSON.stringify({ summary: "s", fields: { order_count: 1.5 } }),
      /fields\.order_count: expected a integer/,
    ],
    [
      JSON.stringify({ summary: "s", fields: { wants_callback: "yes" } }),
      /fields\.wants_callback: expected a boolean/,
    ],
  ])("refuses %s", (text, error) => {
    const a = readAnalysis(plan, text);
    expect(a.status).toBe("failed");
    expect(a.status === "failed" && a.error).toMatch(error);
  });
});

describe("the scripted engine in JSON mode", () => {
  let dir: string;
  let svc: LocalService;
  let client: SvcClient;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "vb-analysis-"));
    svc = await startLocalService({ dataDir: dir, apiKeys: ["k"] });
    client = new SvcClient({ baseURL: svc.url, apiKey: "k" });
  });
  afterAll(async () => {
    await svc?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers the analysis request with an object of the asked shape", async () => {
    const analysis = await analyseCall(plan, turns, async (messages, signal) => {
      const answer = await client.chat.create(
        { model: "svc-3.5-flash", messages, response_format: { type: "json_object" } },
        { signal },
      );
      return answer.choices[0]?.message.content ?? "";
    });
    expect(analysis.status).toBe("done");
    if (analysis.status !== "done") return;
    expect(analysis.summary).toContain("support with my bike");
    // The enum value the conversation mentions.
    expect(analysis.fields).toEqual({ line: "support", order_count: 0, wants_callback: false });
  });

  it("a failing service is a failed analysis, not an exception", async () => {
    const analysis = await analyseCall(plan, turns, async () => {
      throw new Error("HTTP 503 overloaded");
    });
    expect(analysis).toEqual({ status: "failed", error: "HTTP 503 overloaded" });
  });
});
