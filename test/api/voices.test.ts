import { describe, expect, it } from "vitest";
import { SvcValidationError } from "../../src/api/errors.ts";
import type { VoiceEntry } from "../../src/api/types/index.ts";
import { sendJson, useServerAndClient } from "./helpers/server.ts";

const t = useServerAndClient();

// 7 voices, created at t = 1..7; the server pages them like the spec says (order, limit, before/after cursors).
const voices: VoiceEntry[] = Array.from({ length: 7 }, (_, i) => ({
  id: `voice-${i + 1}`,
  file_id: `file-${i + 1}`,
  created_at: i + 1,
}));

function serveVoices(): void {
  t.srv.on("GET /v1/audio/voices", (r, res) => {
    const limit = Number(r.query.get("limit") ?? 20);
    const order = r.query.get("order") ?? "desc";
    const list = order === "asc" ? voices : [...voices].reverse();
    const after = r.query.get("after");
    const before = r.query.get("before");
    let page: VoiceEntry[];
    let hasMore: boolean;
    if (before) {
      const end = list.findIndex((v) => v.id === before);
      const start = Math.max(0, end - limit);
      page = list.slice(start, end);
      hasMore = start > 0;
    } else {
      const start = after ? list.findIndex((v) => v.id === after) + 1 : 0;
      page = list.slice(start, start + limit);
      hasMore = start + limit < list.length;
    }
    sendJson(res, 200, {
      object: "list",
      data: page,
      has_more: hasMore,
      first_id: String(page[0]?.id ?? ""),
      last_id: String(page.at(-1)?.id ?? ""),
    });
  });
}

describe("E10 cloned voices", () => {
  it("lists one page with the query parameters", async () => {
    serveVoices();
    const page = await t.c.voices.list({ limit: 2, order: "asc" });
    expect(page).toEqual({
      object: "list",
      data: voices.slice(0, 2),
      has_more: true,
      first_id: "voice-1",
      last_id: "voice-2",
    });
    expect(t.srv.requests[0]!.query.toString()).toBe("limit=2&order=asc");
  });

  it("follows the after cursor through every page", async () => {
    serveVoices();
    const ids: Array<string | number> = [];
    for await (const v of t.c.voices.iterate({ limit: 3 })) ids.push(v.id);
    expect(ids).toEqual(["voice-7", "voice-6", "voice-5", "voice-4", "voice-3", "voice-2", "voice-1"]);
    expect(t.srv.requests.map((r) => r.query.get("after"))).toEqual([null, "voice-5", "voice-2"]);
  });

  it("pages backward when started with before", async () => {
    serveVoices();
    const ids: Array<string | number> = [];
    for await (const v of t.c.voices.iterate({ limit: 2, order: "asc", before: "voice-6" })) ids.push(v.id);
    expect(ids).toEqual(["voice-4", "voice-5", "voice-2", "voice-3", "voice-1"]);
    expect(t.srv.requests.map((r) => r.query.get("before"))).toEqual(["voice-6", "voice-4", "voice-2"]);
  });

  it("checks the page size before sending", async () => {
    await expect(t.c.voices.list({ limit: 101 })).rejects.toThrow(
      "limit: must be an integer from 1 to 100 (got 101)",
    );
    await expect(t.c.voices.list({ limit: 0 })).rejects.toBeInstanceOf(SvcValidationError);
    expect(t.srv.requests).toHaveLength(0);
  });
});
