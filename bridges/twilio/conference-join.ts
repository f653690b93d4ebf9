// A warm transfer's two Twilio calls joined by Twilio itself: each call gets new TwiML through the
// REST API putting it in one conference (twiml.ts), which ends its media stream to the bridge. The
// person's call moves first: if that fails nothing has changed (the bridge relays instead); if the
// caller's then fails, the person waits alone in the room, so their call is ended and the caller,
// still with the bridge, is taken back by the agent.
import type { Logger } from "../../src/core/log.ts";
import type { NativeJoin } from "../../src/session/transport.ts";
import type { CallControl } from "./call-control.ts";
import { conferenceTwiml, hangupTwiml } from "./twiml.ts";

export interface ConferenceJoin {
  readonly callerSid: string;
  readonly personSid: string;
  /** Unique per transfer: Twilio joins whoever names the same conference. */
  readonly name: string;
  readonly log: Logger;
}

export async function joinInConference(control: CallControl, j: ConferenceJoin): Promise<NativeJoin> {
  const twiml = conferenceTwiml(j.name);
  try {
    await control.updateTwiml(j.personSid, twiml);
  } catch (err) {
    return { kind: "unchanged", why: `the person's call was not moved: ${restError(err)}` };
  }
  try {
    await control.updateTwiml(j.callerSid, twiml);
  } catch (err) {
    const why = `the caller's call was not moved: ${restError(err)}`;
    j.log.error({ conference: j.name, why }, "conference join: ending the person's call, alone in the room");
    await control.updateTwiml(j.personSid, hangupTwiml()).catch(() => undefined);
    return { kind: "person-lost", why };
  }
  j.log.info({ conference: j.name }, "conference join: both calls moved; their media streams end");
  return { kind: "joined" };
}

function restError(err: unknown): string {
  const e = err as { message?: string; status?: number; code?: number };
  return `${e.message ?? String(err)}${e.status ? ` (HTTP ${e.status}${e.code ? `, code ${e.code}` : ""})` : ""}`;
}
