// Hang-up and transfer act on the call, not on the media stream: they replace the call's
// TwiML through the REST API (`calls(sid).update({ twiml })`), which needs account
// credentials. Without them the bridge can only close the media stream.
import twilio from "twilio";

export interface CallControl {
  /** Replaces the TwiML the call is executing (ends the media stream). */
  updateTwiml(callSid: string, twiml: string): Promise<void>;
}

export interface RestCredentials {
  accountSid: string;
  authToken: string;
  /** Replaces the helper's HTTP client (tests point the REST calls at a local server). */
  httpClient?: twilio.RequestClient;
}

export function restCallControl(creds: RestCredentials): CallControl {
  let client: twilio.Twilio | undefined;
  return {
    async updateTwiml(callSid, twiml) {
      client ??= twilio(
        creds.accountSid,
        creds.authToken,
        creds.httpClient ? { httpClient: creds.httpClient } : {},
      );
      await client.calls(callSid).update({ twiml });
    },
  };
}
