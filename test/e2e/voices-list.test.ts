// E10 GET /v1/audio/voices through the project's client over real HTTP: a 250-voice account walked
// page by page in both orders, forwards with `after` and backwards with `before`, without a gap or
// a repeat; both cursors together; limit/order/cursor errors naming the parameter (raw HTTP, since
// the client refuses to send them).
import { beforeAll, describe, expect, it } from "vitest";
import { encodeWav } from "../../codecs/wav.ts";
import type { VoiceEntry, VoiceListParams } from "../../src/api/types/index.ts";
import { speak } from "../helpers/speech.ts";
import { KEY, useService } from "../service/helpers/service.ts";
import { clientFor } from "../service/speech/helpers.ts";

const OTHER = "other-account-key";
const t = useService({ apiKeys: [KEY, OTHER] });
const client = (key = KEY) => clientFor(t.url, key);
const N = 250;
/** Voice ids in creation order. */
const created: string[] = [];

beforeAll(async () => {
  const pcm = speak(
    "Good morning, I am calling to ask whether the repair of my bicycle is finished and when I can pick it up.",
    { rate: 16000 },
  );
  const file = await client().files.upload({ data: encodeWav(pcm, 16000), filename: "sample.wav" });
  // The first voice measures the sample; the other 249 reuse that measurement.
  for (let i = 0; i < N; i++) created.push(String((await client().voices.create({ file_id: file.id })).id));
});

async function walk(params: VoiceListParams): Promise<{ ids: string[]; pages: number }> {
  const c = client();
  const ids: string[] = [];
  let pages = 0;
  let p = { ...params };
  const backward = params.before !== undefined && params.after === undefined;
  for (;;) {
    const page = await c.voices.list(p);
    pages++;
    expect(page.object).toBe("list");
    expect(page.data.length).toBeLessThanOrEqual(params.limit ?? 20);
    expect(page.first_id).toBe(page.data[0] ? String(page.data[0].id) : "");
    expect(page.last_id).toBe(page.data.length ? String(page.data.at(-1)!.id) : "");
    const got = page.data.map((v: VoiceEntry) => String(v.id));
    if (backward) ids.unshift(...got);
    else ids.push(...got);
    if (!page.has_more) return { ids, pages };
    p = backward ? { ...p, before: page.first_id } : { ...p, after: page.last_id };
  }
}

describe("E10 paging a 250-voice account", () => {
  const newestFirst = () => [...created].reverse();

  it("walks forwards in both orders, every voice once", async () => {
    const desc = await walk({ limit: 7 });
    expect(desc.ids).toEqual(newestFirst());
    expect(desc.pages).toBe(Math.ceil(N / 7));
    expect((await walk({ limit: 100, order: "asc" })).ids).toEqual(created);
    expect((await walk({})).pages).toBe(Math.ceil(N / 20));
  });

  it("walks backwards from a cursor in both orders, every voice before it once", async () => {
    const asc = await walk({ limit: 9, order: "asc", before: created[N - 1] });
    expect(asc.ids).toEqual(created.slice(0, N - 1));
    const desc = await walk({ limit: 13, order: "desc", before: created[0] });
    expect(desc.ids).toEqual(newestFirst().slice(0, N - 1));
  });

  it("the client's iterator walks the same lists", async () => {
    const fwd: string[] = [];
    for await (const v of client().voices.iterate({ limit: 33 })) fwd.push(String(v.id));
    expect(fwd).toEqual(newestFirst());
    const back: string[] = [];
    for await (const v of client().voices.iterate({ limit: 33, order: "asc", before: created[200] }))
      back.push(String(v.id));
    // Pages come nearest-the-cursor first, each page in list order.
    const expected: string[] = [];
    for (let end = 200; end > 0; end -= 33) expected.push(...created.slice(Math.max(0, end - 33), end));
    expect(back).toEqual(expected);
    const window: string[] = [];
    for await (const v of client().voices.iterate({
      limit: 4,
      order: "asc",
      after: created[20],
      before: created[35],
    }))
      window.push(String(v.id));
    expect(window).toEqual(created.slice(21, 35));
  });

  it("one page: limit, has_more, first_id, last_id", async () => {
    const page = await client().voices.list({ limit: 5, order: "asc", after: created[10] });
    expect(page.data.map((v) => v.id)).toEqual(created.slice(11, 16));
    expect(page).toMatchObject({ has_more: true, first_id: created[11], last_id: created[15] });
    const last = await client().voices.list({ limit: 5, order: "asc", after: created[N - 3] });
    expect(last).toMatchObject({ has_more: false, first_id: created[N - 2], last_id: created[N - 1] });
    const none = await client().voices.list({ after: created[0] });
    expect(none).toEqual({ object: "list", data: [], has_more: false, first_id: "", last_id: "" });
    expect((await client().voices.list()).data).toHaveLength(20);
    expect((await client().voices.list({ limit: 100 })).data).toHaveLength(100);
  });

  it("before and after together bound a window, walked with after", async () => {
    const win = await walk({ limit: 4, order: "asc", after: created[20], before: created[35] });
    expect(win.ids).toEqual(created.slice(21, 35));
    const desc = await client().voices.list({ limit: 100, after: created[35], before: created[20] });
    expect(desc.data.map((v) => v.id)).toEqual(created.slice(21, 35).reverse());
    const empty = await client().voices.list({ order: "asc", after: created[35], before: created[20] });
    expect(empty.data).toEqual([]);
  });

  it("created_at is non-decreasing in asc order", async () => {
    const all = (await client().voices.list({ limit: 100, order: "asc" })).data;
    for (let i = 1; i < all.length; i++)
      expect(all[i]!.created_at).toBeGreaterThanOrEqual(all[i - 1]!.created_at);
  });

  it("another account sees none of them and cannot use them as cursors", async () => {
    expect((await client(OTHER).voices.list()).data).toEqual([]);
    const res = await fetch(`${t.url}/v1/audio/voices?after=${created[0]}`, {
      headers: { authorization: `Bearer ${OTHER}` },
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { param: string } }).error.param).toBe("after");
  });

  it("bad values are a 400 naming the parameter", async () => {
    const cases: Array<[string, string]> = [
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["limit=2.5", "limit"],
      ["limit=ten", "limit"],
      ["limit=", "limit"],
      ["limit=5&limit=6", "limit"],
      ["order=newest", "order"],
      ["order=ASC", "order"],
      ["before=voice-nope", "before"],
      ["after=file-000000000000000000000000", "after"],
      ["before=", "before"],
    ];
    for (const [query, param] of cases) {
      const res = await fetch(`${t.url}/v1/audio/voices?${query}`, {
        headers: { authorization: `Bearer ${KEY}` },
      });
      const body = (await res.json()) as { error: { param: string; message: string } };
      expect([query, res.status, body.error.param]).toEqual([query, 400, param]);
      expect(body.error.message).toMatch(new RegExp(`^${param}: `));
    }
  });
});
