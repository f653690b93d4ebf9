// The UAS core: every message from UDP or TCP comes here, is parsed (never throwing: 400 when a
// response can be formed, else dropped and counted), passes the transaction layer, and is
// dispatched by method to the dialog it belongs to or to the call setup.

import { PRIVATE_SOURCES } from "../../src/config/sip-access.ts";
import type { Clock } from "../../src/core/clock.ts";
import { CallSetup } from "./call-setup.ts";
import { ClientTransactions } from "./client-transaction.ts";
import type { SipCoreOptions } from "./core-options.ts";
import { type Dialog, type DialogDeps, dialogKey, warning } from "./dialog.ts";
import { DigestServer } from "./digest.ts";
import type { SipFlow } from "./flow.ts";
import { parseInfoDtmf } from "./info-dtmf.ts";
import type { SipCodecName } from "./media-port.ts";
import { header, headerValues, params, type SipRequest, type SipResponse } from "./message.ts";
import { InviteClients } from "./outbound/invite-client.ts";
import { parseMessage } from "./parse.ts";
import { checkRequest, markSource, unsupportedRequired } from "./request-checks.ts";
import { RequestGate } from "./request-gate.ts";
import { makeResponse, randomToken, serialize } from "./serialize.ts";
import { type RefusalReason, SourcePolicy } from "./source-policy.ts";
import { type ServerTransaction, ServerTransactions } from "./transaction.ts";

export type { SipCoreOptions } from "./core-options.ts";

export interface SipStats {
  /** Messages received (datagrams and TCP frames). */
  received: number;
  /** Malformed messages that could not be answered, dropped. */
  dropped: number;
  /** Requests answered 400. */
  badRequests: number;
  /** Responses matching no transaction of ours. */
  strayResponses: number;
  /** Messages whose handling threw (a bug: the message is dropped, the server carries on). */
  internalErrors: number;
  /** Calls answered since start. */
  calls: number;
  /** Requests refused since start, by why (allow-list, rate limit, digest). */
  readonly refused: Readonly<Record<RefusalReason, number>>;
  /** Dialogs live now. */
  readonly dialogs: number;
  /** Server transactions live now. */
  readonly transactions: number;
}

const ALLOWED = ["INVITE", "ACK", "CANCEL", "BYE", "OPTIONS", "UPDATE", "INFO", "NOTIFY"];
const ALLOW = ALLOWED.join(", ");
/** Methods we know but do not take: 405 with Allow (unknown ones get 501). */
const KNOWN = new Set(["REGISTER", "PRACK", "SUBSCRIBE", "PUBLISH", "MESSAGE", "REFER"]);

export class SipCore {
  readonly stats: SipStats;
  readonly #o: SipCoreOptions;
  readonly #server: ServerTransactions;
  readonly #client: ClientTransactions;
  /** INVITEs we send (outbound calls). */
  readonly invites: InviteClients;
  readonly #dialogs = new Map<string, Dialog>();
  readonly #deps: DialogDeps;
  readonly #setup: CallSetup;
  readonly #gate: RequestGate;
  #draining = false;
  /** Resolved when draining and the last call has ended. */
  #idle: (() => void)[] = [];

  constructor(o: SipCoreOptions) {
    this.#o = o;
    this.#server = new ServerTransactions(o.clock, o.timers);
    this.#server.onAckTimeout = (tx) =>
      o.log.debug({ callId: header(tx.request, "call-id") }, "sip: no ACK for a final error response");
    this.#client = new ClientTransactions(o.clock, o.timers);
    this.invites = new InviteClients(o.clock, o.timers);
    const dialogs = this.#dialogs;
    const server = this.#server;
    const policy = new SourcePolicy({
      allowFrom: o.config.allowFrom ?? PRIVATE_SOURCES,
      rateLimit: o.config.rateLimit ?? 50,
      now: () => o.clock.now(),
      log: o.log,
    });
    const users = o.config.users ?? [];
    this.#gate = new RequestGate(
      policy,
      users.length > 0
        ? new DigestServer({
            realm: o.digestRealm ?? "voice-bridge",
            users,
            now: () => o.clock.now(),
            ...(o.config.digestAlgorithms ? { algorithms: o.config.digestAlgorithms } : {}),
          })
        : undefined,
    );
    this.stats = {
      received: 0,
      dropped: 0,
      badRequests: 0,
      strayResponses: 0,
      internalErrors: 0,
      calls: 0,
      refused: policy.refused,
      get dialogs() {
        return dialogs.size;
      },
      get transactions() {
        return server.size;
      },
    };
    this.#deps = {
      clock: o.clock,
      timers: o.timers,
      client: this.#client,
      codecs: o.config.codecs as SipCodecName[],
      srtp: o.config.srtp ?? "optional",
      log: o.log,
      capabilities: [
        { name: "allow", value: ALLOW },
        { name: "supported", value: "timer" },
      ],
      forget: (d) => {
        if (dialogs.get(d.key) === d) dialogs.delete(d.key);
        this.#checkIdle();
      },
      connect: o.connect,
    };
    this.#setup = new CallSetup({
      options: o,
      dialogs: this.#deps,
      draining: () => this.#draining,
      register: (d: Dialog) => {
        dialogs.set(d.key, d);
        this.stats.calls++;
      },
    });
  }

  /** A request of our own outside any dialog (REGISTER) through a client transaction. */
  request(req: SipRequest, flow: SipFlow): Promise<SipResponse> {
    return this.#client.send(req, flow);
  }

  /** What a dialog needs of the core (an outbound call's dialog is made outside it). */
  get dialogDeps(): DialogDeps {
    return this.#deps;
  }

  /** An outbound call was answered: its dialog joins the table (in-dialog requests find it). */
  addDialog(d: Dialog): void {
    this.#dialogs.set(d.key, d);
  }

  /** Sources that are allowed whatever sip.allowFrom says: the registrars we register with. */
  trust(address: string): void {
    this.#gate.policy.trust(address);
  }

  get draining(): boolean {
    return this.#draining;
  }

  /**
   * New calls and OPTIONS probes get 503 from now on; calls in progress carry on. Resolves when
   * the last of them has ended.
   */
  drain(): Promise<void> {
    if (!this.#draining) {
      this.#draining = true;
      this.#o.log.info({ calls: this.#dialogs.size }, "sip: draining, refusing new calls");
    }
    const idle = new Promise<void>((resolve) => this.#idle.push(resolve));
    this.#checkIdle();
    return idle;
  }

  #checkIdle(): void {
    if (!this.#draining || this.#dialogs.size > 0 || this.#idle.length === 0) return;
    this.#o.log.info("sip: drained, no calls left");
    for (const resolve of this.#idle.splice(0)) resolve();
  }

  /** Everything in one message, from whichever transport. Never throws. */
  receive(bytes: Buffer, flow: SipFlow): void {
    this.stats.received++;
    try {
      this.#receive(bytes, flow);
    } catch (err) {
      this.stats.internalErrors++;
      this.#o.log.error({ err, from: flow.remote }, "sip: message handling failed");
    }
  }

  /** A TCP stream that cannot be framed: 400 if its headers allow, then the connection closes. */
  badFrame(error: string, flow: SipFlow, bytes?: Buffer): void {
    try {
      this.#badFrame(error, flow, bytes);
    } catch (err) {
      this.stats.internalErrors++;
      this.#o.log.error({ err, from: flow.remote }, "sip: bad frame handling failed");
    }
  }

  #badFrame(error: string, flow: SipFlow, bytes?: Buffer): void {
    const parsed = bytes ? parseMessage(bytes) : undefined;
    const req =
      parsed && (parsed.ok ? (parsed.msg.kind === "request" ? parsed.msg : undefined) : parsed.partial);
    if (req) this.#badRequest(req, flow, error);
    else this.#drop(flow, error);
  }

  #receive(bytes: Buffer, flow: SipFlow): void {
    const parsed = parseMessage(bytes);
    if (!parsed.ok) {
      if (parsed.partial) this.#badRequest(parsed.partial, flow, parsed.error);
      else this.#drop(flow, parsed.error);
      return;
    }
    const msg = parsed.msg;
    if (msg.kind === "response") {
      if (!this.#client.receive(msg) && !this.invites.receive(msg)) this.stats.strayResponses++;
      return;
    }
    if (!this.#gate.admit(msg, flow)) return;
    const problem = checkRequest(msg);
    if (problem) {
      this.#badRequest(msg, flow, problem);
      return;
    }
    markSource(msg, flow);
    const incoming = this.#server.receive(msg, flow);
    if (incoming.type === "absorbed") return;
    if (incoming.type === "ack") {
      this.#dialogFor(msg)?.ack(msg);
      return;
    }
    this.#dispatch(incoming.tx);
  }

  #dispatch(tx: ServerTransaction): void {
    const req = tx.request;
    const unsupported = unsupportedRequired(req);
    if (unsupported.length > 0 && req.method !== "CANCEL") {
      tx.respond(
        makeResponse(req, 420, { headers: [{ name: "unsupported", value: unsupported.join(", ") }] }),
      );
      return;
    }
    const inDialog = params(header(req, "to") ?? "").has("tag");
    if (req.method === "CANCEL") this.#cancel(tx);
    else if (req.method === "OPTIONS" && !inDialog) this.#options(tx);
    else if (req.method === "INVITE" && !inDialog) {
      if (!this.#gate.authorizeInvite(tx)) return;
      this.#setup.invite(tx).catch((err: unknown) => {
        this.stats.internalErrors++;
        this.#o.log.error({ err, callId: header(req, "call-id") }, "sip: call setup failed");
        tx.respond(makeResponse(req, 500));
      });
    } else this.#inDialog(tx, inDialog);
  }

  #inDialog(tx: ServerTransaction, inDialog: boolean): void {
    const req = tx.request;
    if (!inDialog) {
      // BYE, UPDATE, NOTIFY … only make sense in a dialog: without a To tag there is none.
      const status = ALLOWED.includes(req.method) ? 481 : KNOWN.has(req.method) ? 405 : 501;
      tx.respond(makeResponse(req, status, { headers: [{ name: "allow", value: ALLOW }] }));
      return;
    }
    const dialog = this.#dialogFor(req);
    if (!dialog) {
      tx.respond(makeResponse(req, 481));
      return;
    }
    if (!dialog.inOrder(tx)) return;
    switch (req.method) {
      case "BYE":
        dialog.byeReceived(tx);
        return;
      case "INVITE":
      case "UPDATE":
        dialog.refresh(tx);
        return;
      case "NOTIFY":
        if (dialog.onNotify) dialog.onNotify(tx);
        else tx.respond(makeResponse(req, 481, { reason: "Subscription Does Not Exist" }));
        return;
      case "INFO":
        this.#info(tx, dialog);
        return;
      case "OPTIONS":
        tx.respond(makeResponse(req, 200, { headers: [{ name: "allow", value: ALLOW }] }));
        return;
      default:
        tx.respond(
          makeResponse(req, KNOWN.has(req.method) ? 405 : 501, {
            headers: [{ name: "allow", value: ALLOW }],
          }),
        );
    }
  }

  /** Keypad digits by INFO reach the session like RTP's; other INFO bodies are acknowledged and ignored. */
  #info(tx: ServerTransaction, dialog: Dialog): void {
    const req = tx.request;
    const dtmf = parseInfoDtmf(header(req, "content-type"), req.body.toString("utf8"));
    if ("error" in dtmf) {
      dialog.log.warn({ reason: dtmf.error }, "sip: INFO with a keypad body we cannot read");
      tx.respond(makeResponse(req, 400, { headers: [warning(dtmf.error)] }));
      return;
    }
    tx.respond(makeResponse(req, 200, { headers: [{ name: "allow", value: ALLOW }] }));
    if ("digit" in dtmf) dialog.transport?.digitFromInfo(dtmf.digit);
  }

  #options(tx: ServerTransaction): void {
    if (this.#draining) {
      tx.respond(
        makeResponse(tx.request, 503, {
          headers: [{ name: "retry-after", value: String(this.#o.retryAfterS) }],
        }),
      );
      return;
    }
    tx.respond(
      makeResponse(tx.request, 200, {
        toTag: randomToken(),
        headers: [
          { name: "allow", value: ALLOW },
          { name: "accept", value: "application/sdp" },
          { name: "supported", value: "timer" },
        ],
      }),
    );
  }

  #cancel(tx: ServerTransaction): void {
    const invite = this.#server.inviteFor(tx.request);
    if (invite) this.#setup.cancel(tx, invite);
    else tx.respond(makeResponse(tx.request, 481));
  }

  #dialogFor(req: SipRequest): Dialog | undefined {
    const callId = header(req, "call-id") ?? "";
    const toTag = params(header(req, "to") ?? "").get("tag") ?? "";
    const fromTag = params(header(req, "from") ?? "").get("tag") ?? "";
    return this.#dialogs.get(dialogKey(callId, toTag, fromTag));
  }

  #badRequest(req: SipRequest, flow: SipFlow, problem: string): void {
    if (req.method === "ACK" || headerValues(req, "via").length === 0) {
      this.#drop(flow, problem);
      return;
    }
    this.stats.badRequests++;
    this.#o.log.info({ from: flow.remote, method: req.method, problem }, "sip: bad request, answered 400");
    flow.send(
      serialize(
        makeResponse(req, 400, { reason: `Bad Request (${problem})`.slice(0, 120).replace(/[\r\n]/g, " ") }),
      ),
    );
  }

  #drop(flow: SipFlow, problem: string): void {
    this.stats.dropped++;
    this.#o.log.debug({ from: flow.remote, problem }, "sip: unreadable message dropped");
  }

  /** Hangs up every call (BYE) and stops all timers. */
  async close(): Promise<void> {
    const byes = [...this.#dialogs.values()].map((d) => d.hangUp("server shutting down", true));
    this.#setup.abandonAll();
    // BYEs get a moment to be answered, not their full 32 s of retransmissions.
    let timer: ReturnType<Clock["setTimeout"]> | undefined;
    const patience = new Promise((r) => {
      timer = this.#o.clock.setTimeout(() => r(undefined), 2000);
    });
    await Promise.race([Promise.all(byes), patience]);
    this.#o.clock.clearTimeout(timer);
    this.#server.dispose();
    this.#client.dispose();
    this.invites.dispose();
  }
}
