// Starting a local service for a test file, and reading its answers: JSON, or SSE events decoded
// by the project's own SSE decoder.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { readSse, type SseEvent } from "../../../src/api/sse.ts";
import type { ErrorBody } from "../../../src/api/types/index.ts";
import {
  type LocalService,
  type LocalServiceOptions,
  startLocalService,
} from "../../../src/service/index.ts";

export const KEY = "test-key";

export interface TestService {
  readonly svc: LocalService;
  readonly url: string;
  post(path: string, body: unknown, key?: string): Promise<Response>;
  json<T = Record<string, unknown>>(path: string, body: unknown): Promise<{ status: number; body: T }>;
  /** POSTs and returns the decoded SSE events (throws if the answer is not a 200 stream). */
  events(path: string, body: unknown): Promise<SseEvent[]>;
  error(path: string, body: unknown): Promise<{ status: number; error: ErrorBody["error"] }>;
}

/** A local service for the whole test file (scripted engine at zero pace unless told). */
export function useService(
  opts: Partial<LocalServiceOptions> | (() => Partial<LocalServiceOptions>) = {},
): TestService {
  let dir = "";
  let svc: LocalService | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "svc-test-"));
    const extra = typeof opts === "function" ? opts() : opts;
    svc = await startLocalService({ dataDir: dir, apiKeys: [KEY], chat: { paceMs: 0 }, ...extra });
  });
  afterAll(async () => {
    await svc?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const post = (path: string, body: unknown, key = KEY) =>
    fetch(`${svc!.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  return {
    get svc() {
      return svc!;
    },
    get url() {
      return svc!.url;
    },
    post,
    async json<T>(path: string, body: unknown) {
      const res = await post(path, body);
      return { status: res.status, body: (await res.json()) as T };
    },
    async events(path: string, body: unknown) {
      const res = await post(path, body);
      if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${await res.text()}`);
      if (!res.headers.get("content-type")?.startsWith("text/event-stream"))
        throw new Error("not an event stream");
      const out: SseEvent[] = [];
      for await (const ev of readSse(res.body!)) out.push(ev);
      return out;
    },
    async error(path: string, body: unknown) {
      const res = await post(path, body);
      const json = (await res.json()) as ErrorBody;
      return { status: res.status, error: json.error };
    },
  };
}

/** Parsed data of `data:` events, without the final [DONE]. */
export function dataOf<T>(events: SseEvent[]): T[] {
  return events.filter((e) => e.data !== "[DONE]").map((e) => JSON.parse(e.data) as T);
}
