// Blind transfer by REFER (RFC 3515): send REFER, then follow the implicit subscription's NOTIFYs
// (message/sipfrag, RFC 3420): "SIP/2.0 200" is success (then we BYE), a final failure rejects
// with its reason, and silence after the 202 rejects after 64·T1.
import type { Clock } from "../../src/core/clock.ts";
import type { Dialog } from "./dialog.ts";
import { bareValue, header, parseUri } from "./message.ts";
import { makeResponse } from "./serialize.ts";

/** Refer-To for a target: a SIP URI as it is, a number as `sip:NUMBER@<the caller's host>`. */
export function referTarget(target: string, remoteUri: string): string {
  const t = target.trim();
  if (/^sips?:/i.test(t)) {
    if (!parseUri(t)) throw new Error(`transfer target "${t}" is not a valid SIP URI`);
    return t;
  }
  const number = t.replace(/^tel:/i, "").replace(/[\s().-]/g, "");
  if (!/^\+?[0-9*#]+$/.test(number))
    throw new Error(`transfer target "${target}" is neither a SIP URI nor a phone number`);
  const host = parseUri(remoteUri)?.host;
  if (!host) throw new Error(`cannot transfer to ${number}: the caller's URI "${remoteUri}" names no host`);
  return `sip:${number}@${host}`;
}

export function blindTransfer(dialog: Dialog, clock: Clock, waitMs: number, target: string): Promise<void> {
  if (dialog.ended) return Promise.reject(new Error("cannot transfer: the call has ended"));
  if (dialog.onNotify) return Promise.reject(new Error("cannot transfer: a transfer is already in progress"));
  let referTo: string;
  try {
    referTo = referTarget(target, dialog.remoteUri);
  } catch (err) {
    return Promise.reject(err);
  }
  const log = dialog.log.child({ referTo });
  return new Promise<void>((resolve, reject) => {
    let timer = clock.setTimeout(
      () => finish(new Error(`transfer to ${referTo}: no NOTIFY within ${waitMs / 1000} s`)),
      waitMs,
    );
    const finish = (err?: Error): void => {
      if (!dialog.onNotify) return;
      clock.clearTimeout(timer);
      dialog.onNotify = undefined;
      dialog.onEnd = undefined;
      if (err) {
        log.warn({ err: err.message }, "sip: transfer failed");
        reject(err);
        return;
      }
      log.info("sip: transfer succeeded, hanging up");
      resolve();
      void dialog.hangUp("transferred", true);
    };
    dialog.onEnd = (reason) => finish(new Error(`transfer to ${referTo} abandoned: ${reason}`));
    dialog.onNotify = (tx) => {
      const req = tx.request;
      const event = bareValue(header(req, "event"));
      if (event !== "refer") {
        tx.respond(makeResponse(req, 489, { reason: "Bad Event" }));
        return;
      }
      tx.respond(makeResponse(req, 200));
      const frag = /^SIP\/2\.0\s+(\d{3})\s*(.*)$/m.exec(req.body.toString("utf8"));
      const status = frag ? Number(frag[1]) : 0;
      log.info({ status, state: header(req, "subscription-state") }, "sip: transfer progress (NOTIFY)");
      if (status >= 200 && status < 300) finish();
      else if (status >= 300)
        finish(new Error(`transfer to ${referTo} failed: ${status} ${frag![2]!.trim()}`));
      else if (/^\s*terminated/i.test(header(req, "subscription-state") ?? ""))
        finish(new Error(`transfer to ${referTo}: subscription ended with no final status`));
      else {
        clock.clearTimeout(timer);
        timer = clock.setTimeout(
          () => finish(new Error(`transfer to ${referTo}: no final NOTIFY within ${waitMs / 1000} s`)),
          waitMs,
        );
      }
    };
    log.info("sip: transferring (REFER)");
    dialog
      .request("REFER", [
        { name: "refer-to", value: `<${referTo}>` },
        { name: "referred-by", value: dialog.contact },
        { name: "contact", value: dialog.contact },
      ])
      .then((res) => {
        if (res.status >= 300)
          finish(new Error(`transfer to ${referTo} refused: ${res.status} ${res.reason}`));
      });
  });
}
