// The carrier's side of a warm transfer (session/warm-transfer.ts): the person's call is placed as
// the bridge places outbound calls, on the caller's own carrier — SIP through the outbound proxy,
// Twilio through its REST API (the person's leg is a media stream back to this bridge until the
// person accepts; then Twilio joins both calls in a conference and the bridge leaves) — with the
// outbound caller id, and answering-machine detection (Twilio's asyncAmd where configured, else the
// bridge's own on the audio) decides whether a person answered before the session briefs them.
import { randomBytes } from "node:crypto";
import { type CallControl, restCallControl } from "../../bridges/twilio/call-control.ts";
import { joinInConference } from "../../bridges/twilio/conference-join.ts";
import { rebasedClient } from "../../bridges/twilio/outbound.ts";
import type { Config } from "../../src/config/config.ts";
import type { Logger } from "../../src/core/log.ts";
import { AnsweringMachineDetector } from "../../src/outbound/amd.ts";
import { AmdGate } from "../../src/outbound/amd-gate.ts";
import type { CarrierAmd, Dialer, PlacedCall } from "../../src/outbound/dialer.ts";
import type { CallInfo, DialPerson, PersonLeg } from "../../src/session/transport.ts";
import { PersonNotReached } from "../../src/session/warm-transfer.ts";

/** The bridge's dialers, read per transfer: SIP's exists once SIP is up, Twilio's when configured. */
export type WarmDialers = () => { readonly sip: Dialer | undefined; readonly twilio: Dialer | undefined };

/** Each call's way to place a warm transfer's call, when its carrier can (SIP and Twilio calls). */
export function warmTransferDialer(
  config: Config,
  dialers: WarmDialers,
): (info: CallInfo) => DialPerson | undefined {
  // The REST client makes its connection on first use.
  const control = twilioControl(config);
  return (info) => {
    if (info.transport === "sip")
      return (target, opts) => {
        const dialer = dialers().sip;
        if (!dialer)
          return Promise.reject(
            new PersonNotReached("failed", "SIP dialling is not configured (outbound.sip.proxy)"),
          );
        return dialPerson(dialer, config.outbound.sip.from, target, opts);
      };
    if (info.transport === "twilio")
      return async (target, opts) => {
        const dialer = dialers().twilio;
        if (!dialer)
          return Promise.reject(
            new PersonNotReached(
              "failed",
              "Twilio dialling is not configured (twilio.accountSid, twilio.authToken and server.publicUrl)",
            ),
          );
        const leg = await dialPerson(dialer, config.outbound.twilio.from ?? ourNumber(info), target, opts);
        return withConference(leg, info, control, opts.log);
      };
    return undefined;
  };
}

/** The REST client the person's call was placed with (the same account and base URL). */
function twilioControl(config: Config): CallControl | undefined {
  const { accountSid, authToken } = config.twilio;
  const apiBase = config.outbound.twilio.apiBase;
  if (!accountSid || !authToken) return undefined;
  return restCallControl({
    accountSid,
    authToken,
    ...(apiBase ? { httpClient: rebasedClient(apiBase) } : {}),
  });
}

/**
 * A Twilio caller and a Twilio person: once the person accepts, Twilio joins the two calls in a
 * conference named for the caller's call, and the bridge leaves the media path.
 */
function withConference(
  leg: PersonLeg,
  info: CallInfo,
  control: CallControl | undefined,
  log: Logger,
): PersonLeg {
  // A call the bridge placed is known here by its own id; its CallSid is a parameter (bridges/twilio/outbound.ts).
  const callerSid = info.params.direction === "outbound" ? info.params.callSid : info.callId;
  const personSid = leg.transport.info.params.callSid;
  if (!control || !callerSid || !personSid || leg.transport.info.transport !== "twilio") return leg;
  const name = `warm-transfer-${callerSid}`;
  return { ...leg, join: () => joinInConference(control, { callerSid, personSid, name, log }) };
}

/** The call's own Twilio number (a valid caller id there): the one dialled, or ours on a call we placed. */
function ourNumber(info: CallInfo): string | undefined {
  return info.params.direction === "outbound" ? info.from : info.to;
}

function dialPerson(
  dialer: Dialer,
  from: string | undefined,
  target: string,
  { ringTimeoutS, signal, log }: Parameters<DialPerson>[1],
): Promise<PersonLeg> {
  return new Promise<PersonLeg>((resolve, reject) => {
    const callId = `xfer-${randomBytes(8).toString("hex")}`;
    let early: AnsweringMachineDetector | undefined;
    let placed: PlacedCall | undefined;
    let gate: AmdGate | undefined;
    // The carrier's verdict may come before the media stream that makes the answer (Twilio's callbacks race it).
    let verdict: CarrierAmd | undefined;
    let settled = false;
    const settle = (f: () => void) => {
      if (settled) return;
      settled = true;
      f();
    };
    const carrierDecided = (g: AmdGate, amd: CarrierAmd) =>
      g.carrierDecided(amd.result === "machine" ? "machine" : "human", `carrier: ${amd.detail}`);
    placed = dialer(
      { callId, to: target, ...(from ? { from } : {}), ringTimeoutS, machineDetection: true, log },
      {
        ringing: (detail) => log.info({ detail }, "warm transfer: ringing"),
        earlyMedia: (rate) => {
          const detector = new AnsweringMachineDetector(rate);
          early = detector;
          return (frame) => detector.hearEarly(frame, (frame.length / rate) * 1000);
        },
        carrierAmd: (amd) => {
          if (gate) carrierDecided(gate, amd);
          else verdict = amd;
        },
        failed: (f) => settle(() => reject(new PersonNotReached(f.outcome, f.reason))),
        answered: (transport) => {
          if (signal.aborted) {
            void transport.hangUp("transfer given up");
            return;
          }
          // A person or a machine? The brief waits for the verdict (a key press says a person).
          const g: AmdGate = new AmdGate(
            transport,
            {
              decided: (result, atMs, why) => {
                log.info({ result, atMs: Math.round(atMs), why }, "warm transfer: who answered");
                if (result === "human") settle(() => resolve({ transport: g, who: target }));
                else {
                  void g.hangUp("voicemail");
                  settle(() => reject(new PersonNotReached("voicemail", why)));
                }
              },
              cue: () => {},
              ended: (reason) => settle(() => reject(new PersonNotReached("failed", `hung up: ${reason}`))),
            },
            placed?.carrierAmd !== true,
            early ?? new AnsweringMachineDetector(transport.inputRate),
          );
          gate = g;
          if (verdict) carrierDecided(g, verdict);
          signal.addEventListener("abort", () => settle(() => void g.hangUp("transfer given up")), {
            once: true,
          });
        },
      },
    );
    signal.addEventListener("abort", () => placed?.cancel(), { once: true });
  });
}
