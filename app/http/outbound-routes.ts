// POST /calls places a call (202 {callId}: the call's record exists from now on, GET /calls/:id
// follows it); DELETE /calls/:callId cancels it while it rings or hangs it up. Both sit behind the
// bridge token like the rest of /calls (src/access.ts).
import type { FastifyInstance } from "fastify";
import type { OutboundCalls } from "../../src/outbound/calls.ts";
import type { DialAccepted } from "../../src/outbound/request.ts";

export function registerOutboundRoutes(http: FastifyInstance, calls: OutboundCalls): void {
  http.post("/calls", async (req, reply) => {
    const placed = calls.request(req.body);
    if (!placed.ok) {
      if (placed.retryAfterS !== undefined) reply.header("retry-after", String(placed.retryAfterS));
      return reply.code(placed.status).send({
        error: {
          message: placed.field ? `${placed.field}: ${placed.message}` : placed.message,
          type:
            placed.status === 429
              ? "rate_limited"
              : placed.status === 503
                ? "unavailable"
                : placed.status === 403
                  ? "do_not_call"
                  : "invalid_request",
          ...(placed.field ? { param: placed.field } : {}),
        },
      });
    }
    const accepted: DialAccepted = { callId: placed.callId };
    return reply.code(202).header("location", `/calls/${placed.callId}`).send(accepted);
  });

  http.delete<{ Params: { callId: string } }>("/calls/:callId", async (req, reply) => {
    const done = calls.cancel(req.params.callId);
    if (!done)
      return reply.code(404).send({
        error: {
          message: `no outbound call ${req.params.callId} in progress on this bridge`,
          type: "not_found",
        },
      });
    return reply.code(202).send({ callId: req.params.callId, action: done });
  });
}
