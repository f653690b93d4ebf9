// Per-key concurrency: beyond the cap a generation is refused with 429; a client that hangs up
// mid-stream stops its generation and frees its slot.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { KEY, useService } from "./helpers/service.ts";

// An agent whose "story" takes 400 words × 40 ms = 16 s to stream: far longer than this test runs.
const agentFile = join(mkdtempSync(join(tmpdir(), "svc-agent-")), "long.yaml");
writeFileSync(
  agentFile,
  [
    "name: long talker",
    "greeting: hi",
    "fallback: ok",
    "rules:",
    "  - intent: story",
    "    when: ['story']",
    `    reply: ${"once upon a time ".repeat(100).trim()}`,
  ].join("\n"),
);
const t = useService({ chat: { paceMs: 40, agentFile }, maxConcurrentPerKey: 1, apiKeys: [KEY, "other"] });
const story = {
  model: "svc-3.7-flash",
  stream: true,
  messages: [{ role: "user", content: "tell me a story" }],
};
const short = { model: "svc-3.7-flash", messages: [{ role: "user", content: "hello" }] };

describe("concurrency", () => {
  it("answers 429 past the per-key cap, per key, and frees the slot when a client hangs up", async () => {
    const ac = new AbortController();
    const first = await fetch(`${t.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify(story),
      signal: ac.signal,
    });
    await first.body!.getReader().read();

    const refused = await t.error("/v1/chat/completions", short);
    expect(refused.status).toBe(429);
    expect(refused.error.type).toBe("rate_limit_error");
    expect(refused.error.message).toMatch(/at most 1/);
    expect((await t.post("/v1/chat/completions", short, "other")).status).toBe(200);

    ac.abort();
    let status = 429;
    for (let i = 0; i < 50 && status === 429; i++) {
      await new Promise((r) => setTimeout(r, 20));
      const res = await t.post("/v1/chat/completions", short);
      status = res.status;
      await res.text();
    }
    expect(status).toBe(200);
  });
});
