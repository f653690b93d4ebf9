// The carrier's side of a warm transfer (session/warm-transfer.ts): the person's call is placed as
// the bridge places outbound calls — SIP through the outbound proxy, with the outbound caller id —
// and answering-machine detection decides whether a person answered before the session briefs
// them. Only SIP calls get one: a Twilio call's transfer stays blind for now.
import { randomBytes } from "node:crypto";
import type { Config } from "../../src/config/config.ts";
import { AnsweringMachineDetector } from "../../src/outbound/amd.ts";
import { AmdGate } from "../../src/outbound/amd-gate.ts";
import type { Dialer } from "../../src/outbound/dialer.ts";
import type { CallInfo, DialPerson, PersonLeg } from "../../src/session/transport.ts";
import { PersonNotReached } from "../../src/session/warm-transfer.ts";

/** Each call's way to place a warm transfer's call, when its carrier can (SIP, once SIP is up). */
export function warmTransferDialer(
  config: Config,
  sipDialer: () => Dialer | undefined,
): (info: CallInfo) => DialPerson | undefined {
  return (info) => {
    if (info.transport !== "sip") return undefined;
    return (target, opts) => {
      const dialer = sipDialer();
      if (!dialer)
        return Promise.reject(
          new PersonNotReached("failed", "SIP dialling is not configured (outbound.sip.proxy)"),
        );
      return dialPerson(dialer, config.outbound.sip.from, target, opts);
    };
  };
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
    let settled = false;
    const settle = (f: () => void) => {
      if (settled) return;
      settled = true;
      f();
    };
    const placed = dialer(
      { callId, to: target, ...(from ? { from } : {}), ringTimeoutS, machineDetection: true, log },
      {
        ringing: (detail) => log.info({ detail }, "warm transfer: ringing"),
        earlyMedia: (rate) => {
          const detector = new AnsweringMachineDetector(rate);
          early = detector;
          return (frame) => detector.hearEarly(frame, (frame.length / rate) * 1000);
        },
        failed: (f) => settle(() => reject(new PersonNotReached(f.outcome, f.reason))),
        answered: (transport) => {
          if (signal.aborted) {
            void transport.hangUp("transfer given up");
            return;
          }
          // A person or a machine? The brief waits for the verdict (a key press says a person).
          const gate: AmdGate = new AmdGate(
            transport,
            {
              decided: (result, atMs, why) => {
                log.info({ result, atMs: Math.round(atMs), why }, "warm transfer: who answered");
                if (result === "human") settle(() => resolve({ transport: gate, who: target }));
                else {
                  void gate.hangUp("voicemail");
                  settle(() => reject(new PersonNotReached("voicemail", why)));
                }
              },
              cue: () => {},
              ended: (reason) => settle(() => reject(new PersonNotReached("failed", `hung up: ${reason}`))),
            },
            true,
            early ?? new AnsweringMachineDetector(transport.inputRate),
          );
          signal.addEventListener("abort", () => settle(() => void gate.hangUp("transfer given up")), {
            once: true,
          });
        },
      },
    );
    signal.addEventListener("abort", () => placed.cancel(), { once: true });
  });
}
