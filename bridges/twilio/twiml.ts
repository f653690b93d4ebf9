// TwiML the bridge answers with or pushes through the REST API, built with the twilio helper
// (it escapes attribute and text values).
import twilio from "twilio";

/** `<Connect><Stream url>` with one `<Parameter>` per entry: a bidirectional media stream. */
export function streamTwiml(streamUrl: string, params: Readonly<Record<string, string | undefined>>): string {
  const response = new twilio.twiml.VoiceResponse();
  const stream = response.connect().stream({ url: streamUrl });
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== "") stream.parameter({ name, value });
  }
  return response.toString();
}

/** `<Reject/>`: the call is refused before it is answered (the caller hears busy; no charge). */
export function rejectTwiml(): string {
  const response = new twilio.twiml.VoiceResponse();
  response.reject();
  return response.toString();
}

export function hangupTwiml(): string {
  const response = new twilio.twiml.VoiceResponse();
  response.hangup();
  return response.toString();
}

const PHONE = /^\+?[0-9][0-9\-. ()]{1,30}$/;
const SIP_URI = /^sips?:[^\s<>"]+$/i;

export type TransferTarget = { kind: "phone"; number: string } | { kind: "sip"; uri: string };

/** A phone number (E.164 or dialable digits) or a SIP URI; null when it is neither. */
export function parseTransferTarget(target: string): TransferTarget | null {
  const t = target.trim();
  if (SIP_URI.test(t)) return { kind: "sip", uri: t };
  if (PHONE.test(t)) return { kind: "phone", number: t.replace(/[-. ()]/g, "") };
  return null;
}

/** `<Dial>number</Dial>` or `<Dial><Sip>uri</Sip></Dial>`. */
export function dialTwiml(target: TransferTarget): string {
  const response = new twilio.twiml.VoiceResponse();
  if (target.kind === "sip") response.dial().sip(target.uri);
  else response.dial(target.number);
  return response.toString();
}

/**
 * `<Dial><Conference>`: the call joins conference `name`; it starts when either comes in and ends
 * when either leaves (a two-party join of a warm transfer), without a beep.
 */
export function conferenceTwiml(name: string): string {
  const response = new twilio.twiml.VoiceResponse();
  response
    .dial()
    .conference({ startConferenceOnEnter: true, endConferenceOnExit: true, beep: "false" }, name);
  return response.toString();
}
