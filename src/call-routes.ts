// The bridge's call records over HTTP: GET /calls lists this instance's calls, newest first, a
// page at a time; GET /calls/:callId gives one call's whole record; GET /calls/:callId/recording
// its recording, when calls are recorded (a WAV, with byte ranges so a player can seek).
import { createReadStream, statSync } from "node:fs";
import type { FastifyInstance } from "fastify";
import { decodeCursor, encodeCursor } from "./session/call-index.ts";
import type { TranscriptStore } from "./session/transcript.ts";

export const DEFAULT_PAGE = 20;
export const MAX_PAGE = 100;

interface ListQuery {
  limit?: string;
  cursor?: string;
}

/**
 * `recordingOf` names the file a call was recorded to, if there is one (undefined: calls are not
 * recorded).
 */
export function registerCallRoutes(
  http: FastifyInstance,
  transcripts: TranscriptStore,
  recordingOf?: (callId: string) => string | undefined,
): void {
  const bad = (message: string) => ({ error: { message, type: "invalid_request" } });

  http.get<{ Querystring: ListQuery }>("/calls", async (req, reply) => {
    const { limit: rawLimit, cursor: rawCursor } = req.query;
    const limit = rawLimit === undefined ? DEFAULT_PAGE : /^\d+$/.test(rawLimit) ? Number(rawLimit) : 0;
    if (limit < 1 || limit > MAX_PAGE) {
      return reply
        .code(400)
        .send(bad(`limit: expected a whole number from 1 to ${MAX_PAGE}, got ${JSON.stringify(rawLimit)}`));
    }
    const after = rawCursor === undefined ? undefined : decodeCursor(rawCursor);
    if (rawCursor !== undefined && !after) {
      return reply
        .code(400)
        .send(bad("cursor: not a cursor from a GET /calls page (use its next_cursor as is)"));
    }
    const page = transcripts.list(limit, after);
    return { calls: page.calls, next_cursor: page.next ? encodeCursor(page.next) : null };
  });

  http.get<{ Params: { callId: string } }>("/calls/:callId", async (req, reply) => {
    const record = transcripts.get(req.params.callId);
    return (
      record ??
      reply.code(404).send({ error: { message: `no call ${req.params.callId}`, type: "not_found" } })
    );
  });

  http.get<{ Params: { callId: string } }>("/calls/:callId/recording", async (req, reply) => {
    const { callId } = req.params;
    const path = recordingOf?.(callId);
    if (!path) {
      const why = recordingOf
        ? `no recording of call ${callId}`
        : "calls are not recorded (AGENT_RECORDING_DIR)";
      return reply.code(404).send({ error: { message: why, type: "not_found" } });
    }
    const size = statSync(path).size;
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
