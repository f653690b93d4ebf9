// /campaigns: create a campaign from settings and a list (JSON body, the list as `csv` text or
// `rows`), read them with their counts, pause, resume, cancel, add rows (JSON, or text/csv
// streamed), change the pace or concurrency while it runs, list its latest calls (the console),
// and download the results as CSV.
// Behind the bridge token like /calls (app/bridge/http.ts guards the paths).
import type { Readable } from "node:stream";
import type { FastifyInstance, FastifyReply } from "fastify";
import type { FieldProblem } from "../../src/campaigns/campaign.ts";
import type { CampaignControl, Outcome } from "../../src/campaigns/control.ts";

/** A refusal's body: the first problem as the message, every problem listed. */
function refusal(reply: FastifyReply, status: number, problems: FieldProblem[]) {
  const first = problems[0];
  const at = (p: FieldProblem) => (p.line !== undefined ? `line ${p.line}: ${p.field}` : p.field);
  return reply.code(status).send({
    error: {
      message: first
        ? `${at(first)}: ${first.message}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ""}`
        : "refused",
      type:
        status === 404
          ? "not_found"
          : status === 409
            ? "conflict"
            : status === 413
              ? "too_large"
              : "invalid_request",
      ...(first ? { param: first.field } : {}),
      problems,
    },
  });
}

async function answer<T>(reply: FastifyReply, done: Promise<Outcome<T>>, status = 200) {
  const r = await done;
  return r.ok ? reply.code(status).send(r.value) : refusal(reply, r.status, r.problems);
}

export function registerCampaignRoutes(
  http: FastifyInstance,
  control: CampaignControl,
  limits: { readonly maxListBytes: number },
): void {
  // A CSV body is read as it arrives (parsed row by row, refused once over the limit), never held whole.
  http.addContentTypeParser(["text/csv", "text/plain"], (_req, payload, done) => done(null, payload));
  const bodyLimit = limits.maxListBytes + 64 * 1024;

  http.post("/campaigns", { bodyLimit }, async (req, reply) => {
    const r = await control.createFromBody(req.body);
    if (!r.ok) return refusal(reply, r.status, r.problems);
    return reply.code(201).header("location", `/campaigns/${r.value.campaign.id}`).send(r.value);
  });

  http.get("/campaigns", async () => ({ campaigns: await control.list() }));

  http.get<{ Params: { id: string } }>("/campaigns/:id", async (req, reply) => {
    const c = await control.get(req.params.id);
    return c ? c : refusal(reply, 404, [{ field: "id", message: `no campaign ${req.params.id}` }]);
  });

  http.post<{ Params: { id: string } }>("/campaigns/:id/pause", (req, reply) =>
    answer(reply, control.pause(req.params.id)),
  );
  http.post<{ Params: { id: string } }>("/campaigns/:id/resume", (req, reply) =>
    answer(reply, control.resume(req.params.id)),
  );
  http.post<{ Params: { id: string } }>("/campaigns/:id/cancel", (req, reply) =>
    answer(reply, control.cancel(req.params.id)),
  );
  http.patch<{ Params: { id: string } }>("/campaigns/:id", (req, reply) =>
    answer(reply, control.update(req.params.id, req.body)),
  );

  http.post<{ Params: { id: string } }>("/campaigns/:id/rows", { bodyLimit }, async (req, reply) => {
    const id = req.params.id;
    const type = String(req.headers["content-type"] ?? "");
    if (!/^text\/(csv|plain)/.test(type)) return answer(reply, control.addRows(id, req.body));
    const c = await control.get(id);
    if (!c) {
      (req.body as Readable).resume();
      return refusal(reply, 404, [{ field: "id", message: `no campaign ${id}` }]);
    }
    const stream = req.body as Readable;
    const r = await control.addList(c, { csv: stream });
    // Refused part-way (too large): the rest of the upload is not read.
    if (!r.ok) stream.destroy();
    return r.ok ? reply.send(r.value) : refusal(reply, r.status, r.problems);
  });

  http.get<{ Params: { id: string }; Querystring: { limit?: string } }>(
    "/campaigns/:id/calls",
    (req, reply) => answer(reply, control.calls(req.params.id, req.query.limit)),
  );

  http.get<{ Params: { id: string } }>("/campaigns/:id/results.csv", async (req, reply) => {
    const csv = await control.resultsCsv(req.params.id);
    if (csv === undefined)
      return refusal(reply, 404, [{ field: "id", message: `no campaign ${req.params.id}` }]);
    return reply
      .type("text/csv; charset=utf-8")
      .header("content-disposition", `attachment; filename="${req.params.id}-results.csv"`)
      .send(csv);
  });
}
