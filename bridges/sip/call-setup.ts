// A new call: an INVITE outside any dialog is checked (draining, body, offer), gets an RTP port
// from the media side before the answer is written, is answered 200 (with our answer, or our
// offer when it came without one), and the call's transport is made and handed to the bridge.
// A CANCEL before the answer ends it with 487 and gives the port back.
import { networkInterfaces } from "node:os";
import type { CallInfo } from "../transport.ts";
import type { SipCoreOptions } from "./core-options.ts";
import { Dialog, type DialogDeps, warning } from "./dialog.ts";
import type { SipFlow } from "./flow.ts";
import type { NegotiatedMedia, RtpEndpoint } from "./media-port.ts";
import { bareValue, header, parseNameAddr, parseUri, type SipRequest } from "./message.ts";
import { blindTransfer } from "./refer.ts";
import { negotiate } from "./sdp-answer.ts";
import { makeResponse, randomToken } from "./serialize.ts";
import { refuseTooSmall } from "./session-timer.ts";
import type { ServerTransaction } from "./transaction.ts";

export interface CallSetupDeps {
  readonly options: SipCoreOptions;
  readonly dialogs: DialogDeps;
  readonly draining: () => boolean;
  /** A dialog is answered: into the table. */
  readonly register: (d: Dialog) => void;
}

/** An INVITE about to be answered: the port is being opened; a CANCEL may still arrive. */
interface PendingInvite {
  readonly localTag: string;
  cancelled: boolean;
}

export class CallSetup {
  readonly #d: CallSetupDeps;
  readonly #pending = new Map<string, PendingInvite>();

  constructor(deps: CallSetupDeps) {
    this.#d = deps;
  }

  async invite(tx: ServerTransaction): Promise<void> {
    const o = this.#d.options;
    const req = tx.request;
    const log = o.log.child({ callId: header(req, "call-id") ?? "" });
    if (this.#d.draining()) {
      tx.respond(
        makeResponse(req, 503, { headers: [{ name: "retry-after", value: String(o.retryAfterS) }] }),
      );
      log.info("sip: call refused, draining");
      return;
    }
    const type = bareValue(header(req, "content-type"));
    if (req.body.length > 0 && type !== "application/sdp") {
      const reason = `body is ${type || "untyped"}, not application/sdp`;
      tx.respond(
        makeResponse(req, 415, { headers: [warning(reason), { name: "accept", value: "application/sdp" }] }),
      );
      log.info({ reason }, "sip: call refused");
      return;
    }
    if (refuseTooSmall(tx)) {
      log.info("sip: call refused, Session-Expires below Min-SE");
      return;
    }
    const offer =
      req.body.length > 0
        ? negotiate(req.body.toString("utf8"), this.#d.dialogs.codecs, this.#d.dialogs.srtp)
        : undefined;
    if (offer && !offer.ok) {
      tx.respond(makeResponse(req, 488, { headers: [warning(offer.reason)] }));
      log.info({ reason: offer.reason }, "sip: call refused, no acceptable media");
      return;
    }
    const pending: PendingInvite = { localTag: randomToken(), cancelled: false };
    this.#pending.set(tx.key, pending);
    const info = callInfo(req);
    if (o.admit) {
      // The caller hears ringing while the agent is chosen (a call-start webhook may be asked).
      tx.respond(makeResponse(req, 180, { toTag: pending.localTag }));
      const admission = await o.admit(info);
      if (pending.cancelled || tx.answered) {
        this.#pending.delete(tx.key);
        return;
      }
      if (!admission.accept) {
        this.#pending.delete(tx.key);
        tx.respond(makeResponse(req, 603, { toTag: pending.localTag, headers: [warning(admission.reason)] }));
        log.info({ reason: admission.reason }, "sip: call declined (603)");
        return;
      }
    }
    let endpoint: RtpEndpoint;
    try {
      endpoint = await o.ports.open();
    } catch (err) {
      log.warn({ err: (err as Error).message }, "sip: call refused, no RTP port");
      const headers = [warning("no RTP port free"), { name: "retry-after", value: "5" }];
      tx.respond(makeResponse(req, 503, { toTag: pending.localTag, headers }));
      return;
    } finally {
      this.#pending.delete(tx.key);
    }
    if (pending.cancelled || tx.answered) {
      endpoint.close();
      return;
    }
    const dialog = new Dialog(this.#d.dialogs, {
      invite: req,
      flow: tx.flow,
      localTag: pending.localTag,
      address: localAddress(o.config.publicIp, tx.flow, req.uri),
      sipPort: o.listenPort(tx.flow.transport),
      endpoint,
      ...(offer ? { media: offer.media, offer: { index: offer.index, lines: offer.lines } } : {}),
    });
    this.#d.register(dialog);
    dialog.log.info(
      {
        from: info.from,
        to: info.to,
        codec: offer?.media.codec.name ?? "late offer",
        ...(offer?.media.srtp ? { srtp: offer.media.srtp.suite } : {}),
        rtpPort: endpoint.port,
        via: tx.flow.transport,
      },
      "sip: call answered",
    );
    dialog.answer(tx);
    dialog.startSessionTimer();
    // The transport is made at the 200, not the ACK: callers send RTP as soon as they see the 200,
    // and a lost ACK would otherwise hold back the greeting by a retransmission round. With a late
    // offer nothing is agreed before the ACK's answer, so it waits for that.
    if (dialog.media) this.#startMedia(dialog, info, dialog.media);
    else dialog.onMedia = (media) => this.#startMedia(dialog, info, media);
  }

  #startMedia(dialog: Dialog, info: CallInfo, media: NegotiatedMedia): void {
    const o = this.#d.options;
    try {
      const transport = o.createTransport({
        info,
        endpoint: dialog.endpoint,
        media,
        control: dialog.control((target) => blindTransfer(dialog, o.clock, 64 * o.timers.t1, target)),
        clock: o.clock,
        log: dialog.log,
        mediaTimeoutMs: o.config.mediaTimeoutS * 1000,
      });
      dialog.transport = transport;
      if (dialog.ended) transport.end("call ended before media started");
      else o.onCall(transport);
    } catch (err) {
      dialog.log.error({ err }, "sip: media side failed to start, hanging up");
      void dialog.hangUp("media failed");
    }
  }

  /** CANCEL (already matched to its INVITE transaction): 200, then 487 if the INVITE is still unanswered. */
  cancel(tx: ServerTransaction, invite: ServerTransaction): void {
    tx.respond(makeResponse(tx.request, 200));
    const pending = this.#pending.get(invite.key);
    if (invite.answered || !pending) return;
    pending.cancelled = true;
    invite.respond(makeResponse(invite.request, 487, { toTag: pending.localTag }));
    this.#d.options.log.info(
      { callId: header(tx.request, "call-id") },
      "sip: caller cancelled before the answer",
    );
  }

  /** Shutdown: INVITEs still waiting for a port are dropped (their ports closed when they come). */
  abandonAll(): void {
    for (const p of this.#pending.values()) p.cancelled = true;
  }
}

function callInfo(req: SipRequest): CallInfo {
  const from = parseNameAddr(header(req, "from") ?? "")?.uri;
  const to = parseNameAddr(header(req, "to") ?? "")?.uri;
  const params: Record<string, string> = {};
  // X- headers become call parameters (names lower-cased).
  for (const h of req.headers) if (h.name.startsWith("x-")) params[h.name] = h.value;
  return {
    callId: header(req, "call-id") ?? "",
    transport: "sip",
    ...(from ? { from: userOrUri(from) } : {}),
    ...(to ? { to: userOrUri(to) } : {}),
    params,
  };
}

/** The user part of a SIP URI (a number, an extension), else the whole URI. */
function userOrUri(uri: string): string {
  return parseUri(uri)?.user ?? uri;
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
