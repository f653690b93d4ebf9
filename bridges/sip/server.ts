// The UAS core: every message from UDP or TCP comes here, is parsed (never throwing: 400 when a
// response can be formed, else dropped and counted), passes the transaction layer, and is
// dispatched by method to the dialog it belongs to or to the call setup.
import { networkInterfaces } from "node:os";
import type { Config } from "../../src/config.ts";
import type { Logger } from "../../src/log.ts";
import type { Clock } from "../../src/session/clock.ts";
import type { CallTransport } from "../transport.ts";
import { ClientTransactions } from "./client-transaction.ts";
import { Dialog, type DialogDeps, dialogKey, warning } from "./dialog.ts";
import type { SipFlow } from "./flow.ts";
import type { RtpPortPool, SipCallTransportFactory, SipCodecName } from "./media-port.ts";
import {
  header,
  headerValues,
  params,
  parseCSeq,
  parseNameAddr,
  parseUri,
  parseVia,
  type SipHeader,
  type SipRequest,
} from "./message.ts";
import { parseMessage } from "./parse.ts";
import { blindTransfer } from "./refer.ts";
import { negotiate } from "./sdp-answer.ts";
import { makeResponse, randomToken, serialize } from "./serialize.ts";
import { type ServerTransaction, ServerTransactions, type SipTimers } from "./transaction.ts";

export interface SipCoreOptions {
  readonly config: Config["sip"];
  readonly log: Logger;
  readonly clock: Clock;
  readonly timers: SipTimers;
  readonly ports: RtpPortPool;
  readonly createTransport: SipCallTransportFactory;
  readonly onCall: (transport: CallTransport) => void;
  /** Retry-After on 503 while draining, seconds. */
  readonly retryAfterS: number;
  /** The port each transport listens on, for Via and Contact. */
  readonly listenPort: (transport: SipFlow["transport"]) => number;
}

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
  /** Dialogs live now. */
  readonly dialogs: number;
  /** Server transactions live now. */
  readonly transactions: number;
}

const ALLOWED = ["INVITE", "ACK", "CANCEL", "BYE", "OPTIONS", "UPDATE", "INFO", "NOTIFY"];
const ALLOW = ALLOWED.join(", ");
/** Methods we know but do not take: 405 with Allow (unknown ones get 501). */
const KNOWN = new Set(["REGISTER", "PRACK", "SUBSCRIBE", "PUBLISH", "MESSAGE", "REFER"]);
const SUPPORTED_EXTENSIONS = new Set(["timer"]);

/** An INVITE answered soon: the port is being opened; a CANCEL may still arrive. */
interface PendingInvite {
  readonly localTag: string;
  cancelled: boolean;
}

export class SipCore {
  readonly stats: SipStats;
  readonly #o: SipCoreOptions;
  readonly #server: ServerTransactions;
  readonly #client: ClientTransactions;
  readonly #dialogs = new Map<string, Dialog>();
  readonly #pending = new Map<string, PendingInvite>();
  readonly #deps: DialogDeps;
  #draining = false;

  constructor(o: SipCoreOptions) {
    this.#o = o;
    this.#server = new ServerTransactions(o.clock, o.timers);
    this.#server.onAckTimeout = (tx) =>
      o.log.debug({ callId: header(tx.request, "call-id") }, "sip: no ACK for a final error response");
    this.#client = new ClientTransactions(o.clock, o.timers);
    const dialogs = this.#dialogs;
    const server = this.#server;
    this.stats = {
      received: 0,
      dropped: 0,
      badRequests: 0,
      strayResponses: 0,
      internalErrors: 0,
      calls: 0,
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
      log: o.log,
      capabilities: [
        { name: "allow", value: ALLOW },
        { name: "supported", value: "timer" },
      ],
      forget: (d) => {
        if (dialogs.get(d.key) === d) dialogs.delete(d.key);
      },
    };
  }

  get draining(): boolean {
    return this.#draining;
  }

  /** New calls and OPTIONS probes get 503 from now on; calls in progress carry on. */
  drain(): void {
    if (this.#draining) return;
    this.#draining = true;
    this.#o.log.info({ calls: this.#dialogs.size }, "sip: draining, refusing new calls");
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
      if (!this.#client.receive(msg)) this.stats.strayResponses++;
      return;
    }
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
    const unsupported = (header(req, "require") ?? "")
      .split(",")
      .map((s) => s.trim().toLowerCase())
      .filter((s) => s && !SUPPORTED_EXTENSIONS.has(s));
    if (unsupported.length > 0 && req.method !== "CANCEL") {
      tx.respond(
        makeResponse(req, 420, { headers: [{ name: "unsupported", value: unsupported.join(", ") }] }),
      );
      return;
    }
    const inDialog = params(header(req, "to") ?? "").has("tag");
    if (req.method === "CANCEL") this.#cancel(tx);
    else if (req.method === "OPTIONS" && !inDialog) this.#options(tx);
    else if (req.method === "INVITE" && !inDialog)
      this.#invite(tx).catch((err: unknown) => {
        this.stats.internalErrors++;
        this.#o.log.error({ err, callId: header(req, "call-id") }, "sip: call setup failed");
        tx.respond(makeResponse(req, 500));
      });
    else this.#inDialog(tx, inDialog);
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
      case "OPTIONS":
      case "INFO":
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

  async #invite(tx: ServerTransaction): Promise<void> {
    const req = tx.request;
    const callId = header(req, "call-id") ?? "";
    const log = this.#o.log.child({ callId });
    if (this.#draining) {
      tx.respond(
        makeResponse(req, 503, { headers: [{ name: "retry-after", value: String(this.#o.retryAfterS) }] }),
      );
      log.info("sip: call refused, draining");
      return;
    }
    const type = (header(req, "content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (req.body.length === 0 || type !== "application/sdp") {
      const reason =
        req.body.length === 0
          ? "no SDP offer (offerless INVITE is not supported)"
          : `body is ${type || "untyped"}, not application/sdp`;
      tx.respond(
        makeResponse(req, req.body.length === 0 ? 488 : 415, {
          headers: [warning(reason), { name: "accept", value: "application/sdp" }],
        }),
      );
      log.info({ reason }, "sip: call refused");
      return;
    }
    const offer = negotiate(req.body.toString("utf8"), this.#deps.codecs);
    if (!offer.ok) {
      tx.respond(makeResponse(req, 488, { headers: [warning(offer.reason)] }));
      log.info({ reason: offer.reason }, "sip: call refused, no acceptable media");
      return;
    }
    const pending: PendingInvite = { localTag: randomToken(), cancelled: false };
    this.#pending.set(tx.key, pending);
    let endpoint: Awaited<ReturnType<RtpPortPool["open"]>>;
    try {
      endpoint = await this.#o.ports.open();
    } catch (err) {
      this.#pending.delete(tx.key);
      log.warn({ err: (err as Error).message }, "sip: call refused, no RTP port");
      tx.respond(
        makeResponse(req, 503, {
          toTag: pending.localTag,
          headers: [warning("no RTP port free"), { name: "retry-after", value: "5" }],
        }),
      );
      return;
    }
    this.#pending.delete(tx.key);
    if (pending.cancelled || tx.answered) {
      endpoint.close();
      return;
    }
    const dialog = new Dialog(this.#deps, {
      invite: req,
      flow: tx.flow,
      localTag: pending.localTag,
      address: localAddress(this.#o.config.publicIp, tx.flow, req.uri),
      sipPort: this.#o.listenPort(tx.flow.transport),
      endpoint,
      media: offer.media,
      offer: { index: offer.index, lines: offer.lines },
    });
    this.#dialogs.set(dialog.key, dialog);
    this.stats.calls++;
    dialog.answer(tx);
    dialog.startSessionTimer();
    const from = parseNameAddr(header(req, "from") ?? "")?.uri;
    const to = parseNameAddr(header(req, "to") ?? "")?.uri;
    const info = {
      callId,
      transport: "sip" as const,
      ...(from ? { from: userOrUri(from) } : {}),
      ...(to ? { to: userOrUri(to) } : {}),
      params: xHeaders(req),
    };
    dialog.log.info(
      {
        from: info.from,
        to: info.to,
        codec: offer.media.codec.name,
        rtpPort: endpoint.port,
        via: tx.flow.transport,
      },
      "sip: call answered",
    );
    // The transport is made at the 200, not the ACK: callers send RTP as soon as they see the 200,
    // and a lost ACK would otherwise hold back the greeting by a retransmission round.
    try {
      const transport = this.#o.createTransport({
        info,
        endpoint,
        media: offer.media,
        control: dialog.control((target) =>
          blindTransfer(dialog, this.#o.clock, 64 * this.#o.timers.t1, target),
        ),
        clock: this.#o.clock,
        log: dialog.log,
        mediaTimeoutMs: this.#o.config.mediaTimeoutS * 1000,
      });
      dialog.transport = transport;
      if (dialog.ended) transport.end("call ended before media started");
      else this.#o.onCall(transport);
    } catch (err) {
      dialog.log.error({ err }, "sip: media side failed to start, hanging up");
      void dialog.hangUp("media failed");
    }
  }

  #cancel(tx: ServerTransaction): void {
    const invite = this.#server.inviteFor(tx.request);
    if (!invite) {
      tx.respond(makeResponse(tx.request, 481));
      return;
    }
    tx.respond(makeResponse(tx.request, 200));
    const pending = this.#pending.get(invite.key);
    if (invite.answered || !pending) return;
    pending.cancelled = true;
    invite.respond(makeResponse(invite.request, 487, { toTag: pending.localTag }));
    this.#o.log.info({ callId: header(tx.request, "call-id") }, "sip: caller cancelled before the answer");
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
    for (const p of this.#pending.values()) p.cancelled = true;
    await Promise.race([
      Promise.all(byes),
      new Promise((r) => this.#o.clock.setTimeout(() => r(undefined), 2000)),
    ]);
    this.#server.dispose();
    this.#client.dispose();
  }
}

/** What makes a request unanswerable in a dialog sense (RFC 3261 §8.1.1), or undefined. */
function checkRequest(req: SipRequest): string | undefined {
  const via = headerValues(req, "via")[0];
  if (!via) return "missing Via header";
  if (!parseVia(via)) return "malformed Via header";
  if (!header(req, "call-id")) return "missing Call-ID header";
  const cseq = parseCSeq(header(req, "cseq"));
  if (!cseq) return "missing or malformed CSeq header";
  if (cseq.method !== req.method) return `CSeq method ${cseq.method} does not match ${req.method}`;
  if (!parseNameAddr(header(req, "from") ?? "")) return "missing or malformed From header";
  if (!parseNameAddr(header(req, "to") ?? "")) return "missing or malformed To header";
  if (!parseUri(req.uri)) return `Request-URI "${req.uri.slice(0, 60)}" is not a SIP URI`;
  return undefined;
}

/** RFC 3261 §18.2.1 `received` and RFC 3581 `rport` on the top Via, so responses name the real source. */
function markSource(req: SipRequest, flow: SipFlow): void {
  const vias = headerValues(req, "via");
  const top = parseVia(vias[0]!)!;
  let value = vias[0]!;
  if (top.params.has("rport")) value = value.replace(/;\s*rport(=[^;]*)?/i, `;rport=${flow.remote.port}`);
  if (top.host !== flow.remote.address || top.params.has("rport")) {
    value = value.replace(/;\s*received=[^;]*/i, "");
    value += `;received=${flow.remote.address}`;
  }
  const rest: SipHeader[] = vias.slice(1).map((v) => ({ name: "via", value: v }));
  const first = req.headers.findIndex((h) => h.name === "via");
  req.headers = req.headers.filter((h) => h.name !== "via");
  req.headers.splice(first, 0, { name: "via", value }, ...rest);
}

/** The address we are reached at: SIP_PUBLIC_IP, else the socket's own, else the one they dialled. */
function localAddress(publicIp: string | undefined, flow: SipFlow, requestUri: string): string {
  if (publicIp) return publicIp;
  const own = flow.local.address.replace(/^::ffff:/, "");
  if (own && own !== "0.0.0.0" && own !== "::") return own;
  const dialled = parseUri(requestUri)?.host;
  if (dialled && /^\d{1,3}(\.\d{1,3}){3}$/.test(dialled)) return dialled;
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (a.family === "IPv4" && !a.internal) return a.address;
  return "127.0.0.1";
}

/** The user part of a SIP URI (a number, an extension), else the whole URI. */
function userOrUri(uri: string): string {
  return parseUri(uri)?.user ?? uri;
}

/** `X-…` headers as call parameters (names as the caller spelled them, lower-cased). */
function xHeaders(req: SipRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const h of req.headers) if (h.name.startsWith("x-")) out[h.name] = h.value;
  return out;
}
