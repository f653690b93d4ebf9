// The bridge's call records over HTTP: GET /calls lists this instance's calls, newest first, a
// page at a time; GET /calls/:callId gives one call's whole record.
import type { FastifyInstance } from "fastify";
import { decodeCursor, encodeCursor } from "./session/call-index.ts";
import type { TranscriptStore } from "./session/transcript.ts";

export const DEFAULT_PAGE = 20;
export const MAX_PAGE = 100;

interface ListQuery {
  limit?: string;
  cursor?: string;
}

export function registerCallRoutes(http: FastifyInstance, transcripts: TranscriptStore): void {
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
}
