// The bridge's call records over HTTP: GET /calls lists the calls of every bridge on the store,
// newest first, a page at a time, filtered (call-query.ts); GET /calls/:callId gives one call's
// whole record; GET /calls/:callId/recording its recording, when the call was recorded and the
// file is reachable from here (this instance, or a volume the instances share): a WAV, with byte
// ranges so a player can seek.
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import type { FastifyInstance } from "fastify";
import type { CallRecord } from "../../src/records/call-record.ts";
import { encodeCursor, parseCallQuery } from "../../src/records/store/call-query.ts";
import type { CallPage, CallQuery } from "../../src/records/store/call-store.ts";

export { DEFAULT_PAGE, MAX_PAGE } from "../../src/records/store/call-query.ts";

/** What the routes read: memory for live calls, the store for the rest. */
export interface CallReader {
  get(callId: string): Promise<CallRecord | undefined>;
  list(query: CallQuery): Promise<CallPage>;
  /** The recording's file, if the call was recorded and the file is here. */
  recordingOf(callId: string): Promise<string | undefined>;
  /** Whether calls are recorded on this bridge (for the 404's wording). */
  readonly recording: boolean;
}

export function registerCallRoutes(http: FastifyInstance, calls: CallReader): void {
  const bad = (message: string) => ({ error: { message, type: "invalid_request" } });
  // The database down: a clear 503 (calls go on; their records are written once it is back).
  const unavailable = (err: unknown) => ({
    error: { message: `call records unavailable: ${(err as Error).message}`, type: "unavailable" },
  });

  http.get("/calls", async (req, reply) => {
    const parsed = parseCallQuery(req.query as Record<string, unknown>);
    if (!parsed.ok) return reply.code(400).send(bad(parsed.message));
    let page: CallPage;
    try {
      page = await calls.list(parsed.query);
    } catch (err) {
      return reply.code(503).send(unavailable(err));
    }
    return { calls: page.calls, next_cursor: page.next ? encodeCursor(page.next) : null };
  });

  http.get<{ Params: { callId: string } }>("/calls/:callId", async (req, reply) => {
    let record: CallRecord | undefined;
    try {
      record = await calls.get(req.params.callId);
    } catch (err) {
      return reply.code(503).send(unavailable(err));
    }
    return (
      record ??
      reply.code(404).send({ error: { message: `no call ${req.params.callId}`, type: "not_found" } })
    );
  });

  http.get<{ Params: { callId: string } }>("/calls/:callId/recording", async (req, reply) => {
    const { callId } = req.params;
    const path = await calls.recordingOf(callId).catch(() => undefined);
    const size: number | undefined = path
      ? await stat(path).then(
          (s) => (s.isFile() ? s.size : undefined),
          () => undefined,
        )
      : undefined;
    if (!path || size === undefined) {
      const why = calls.recording
        ? `no recording of call ${callId} here`
        : `no recording of call ${callId} here (this bridge does not record calls: AGENT_RECORDING_DIR)`;
      return reply.code(404).send({ error: { message: why, type: "not_found" } });
    }
    const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? "");
    reply.type("audio/wav").header("accept-ranges", "bytes").header("cache-control", "no-cache");
    if (!range || (range[1] === "" && range[2] === ""))
      return reply.header("content-length", size).send(createReadStream(path));
    // `bytes=a-b`, `bytes=a-` or the last n bytes `bytes=-n`.
    const start = range[1] === "" ? Math.max(0, size - Number(range[2])) : Number(range[1]);
    const end = range[1] === "" || range[2] === "" ? size - 1 : Math.min(size - 1, Number(range[2]));
    if (start > end || start >= size)
      return reply.code(416).header("content-range", `bytes */${size}`).send();
    return reply
      .code(206)
      .header("content-range", `bytes ${start}-${end}/${size}`)
      .header("content-length", end - start + 1)
      .send(createReadStream(path, { start, end }));
  });
}
