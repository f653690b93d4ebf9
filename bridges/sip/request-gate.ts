// The doors a request passes before the stack spends anything on it: the source policy (rate and
// allow-list; refused requests are answered statelessly or dropped, no transaction kept) and, for
// a new call when sip.users is set, digest authentication (401 challenge, 403 for wrong
// credentials: never a call).
import type { DigestServer } from "./digest.ts";
import type { SipFlow } from "./flow.ts";
import { header, headerValues, params, type SipRequest } from "./message.ts";
import { makeResponse, randomToken, serialize } from "./serialize.ts";
import type { SourcePolicy } from "./source-policy.ts";
import type { ServerTransaction } from "./transaction.ts";

export class RequestGate {
  readonly policy: SourcePolicy;
  readonly #digest: DigestServer | undefined;

  constructor(policy: SourcePolicy, digest: DigestServer | undefined) {
    this.policy = policy;
    this.#digest = digest;
  }

  /** False: the request was refused (403 sent, or dropped) and goes no further. */
  admit(req: SipRequest, flow: SipFlow): boolean {
    const source = flow.remote.address;
    const allowed = this.policy.allowed(source);
    // Inside a call (a To tag), ACK and CANCEL: a known peer's call goes on whatever its rate.
    const outside =
      req.method !== "ACK" && req.method !== "CANCEL" && !params(header(req, "to") ?? "").has("tag");
    if ((outside || !allowed) && !this.policy.admit(source)) {
      this.policy.refuse("rate_limited", source, { method: req.method });
      return false;
    }
    if (allowed) return true;
    if (req.method === "ACK") return false; // the ACK of our own 403
    this.policy.refuse("not_allowed", source, {
      method: req.method,
      userAgent: header(req, "user-agent")?.slice(0, 80),
    });
    if (headerValues(req, "via").length > 0)
      flow.send(
        serialize(makeResponse(req, 403, { toTag: randomToken(), reason: "Forbidden (source not allowed)" })),
      );
    return false;
  }

  /** A new INVITE: true when it may become a call; otherwise it has been answered 401 or 403. */
  authorizeInvite(tx: ServerTransaction): boolean {
    if (!this.#digest) return true;
    const req = tx.request;
    const source = tx.flow.remote.address;
    const verdict = this.#digest.verify(headerValues(req, "authorization"), req.method, req.uri, source);
    if (verdict.ok) return true;
    if (verdict.action === "forbid") {
      this.policy.refuse("bad_credentials", source, { reason: verdict.reason });
      tx.respond(makeResponse(req, 403, { toTag: randomToken(), reason: "Forbidden (wrong credentials)" }));
      return false;
    }
    this.policy.refuse("unauthenticated", source, { reason: verdict.reason });
    const challenges = this.#digest.challenge(source, verdict.stale);
    tx.respond(
      makeResponse(req, 401, {
        toTag: randomToken(),
        reason: "Unauthorized",
        headers: challenges.map((value) => ({ name: "www-authenticate", value })),
      }),
    );
    return false;
  }
}
