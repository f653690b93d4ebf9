// The simulator's stand-in for Twilio's REST API, driven by the twilio helper itself (as the
// bridge drives it): new TwiML for a followed call ends its stream and is read as a transfer or a
// hang-up, or seats the call in a conference where it hears the others; wrong credentials and
// unknown calls are refused as Twilio refuses them.
import twilio from "twilio";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { restCallControl } from "../../../bridges/twilio/call-control.ts";
import { rebasedClient } from "../../../bridges/twilio/outbound.ts";
import { conferenceTwiml } from "../../../bridges/twilio/twiml.ts";
import { ConferenceSeat } from "../../../tools/twilio-sim/conference.ts";
import { SimulatedRestApi } from "../../../tools/twilio-sim/rest-api.ts";
import { newCallSid } from "../../../tools/twilio-sim/simulate.ts";
import { readCallTwiml } from "../../../tools/twilio-sim/twiml-read.ts";

const ACCOUNT = `AC${"1".repeat(32)}`;
const TOKEN = "rest-api-test-token";
let api: SimulatedRestApi;
beforeAll(async () => {
  api = await SimulatedRestApi.start(ACCOUNT, TOKEN);
});
afterAll(() => api.close());

describe("the simulated REST API", () => {
  it("reads where new TwiML sends a call", () => {
    expect(readCallTwiml("<Response><Dial>+15550100</Dial></Response>")).toEqual({
      dial: "+15550100",
      hangUp: false,
    });
    expect(
      readCallTwiml('<Response><Dial timeout="5"><Sip>sip:a@b.example?x=1&amp;y=2</Sip></Dial></Response>'),
    ).toEqual({ dial: "sip:a@b.example?x=1&y=2", hangUp: false });
    expect(readCallTwiml("<Response><Hangup/></Response>")).toEqual({ hangUp: true });
    expect(readCallTwiml(conferenceTwiml("room <1>"))).toEqual({
      conference: { name: "room <1>", startConferenceOnEnter: true, endConferenceOnExit: true },
      hangUp: false,
    });
    expect(readCallTwiml("<Response><Dial><Conference>r</Conference></Dial></Response>")).toEqual({
      conference: { name: "r", startConferenceOnEnter: true, endConferenceOnExit: false },
      hangUp: false,
    });
  });

  it("seats two calls given one conference: each hears the other, and one leaving ends it", async () => {
    const control = restCallControl({
      accountSid: ACCOUNT,
      authToken: TOKEN,
      httpClient: rebasedClient(api.url),
    });
    const [a, b] = [newCallSid(), newCallSid()];
    const [ca, cb] = [api.follow(a), api.follow(b)];
    await control.updateTwiml(a, conferenceTwiml("warm-1"));
    await control.updateTwiml(b, conferenceTwiml("warm-1"));
    const [sa, sb] = [ca.ended.reason, cb.ended.reason] as ConferenceSeat[];
    expect(sa).toBeInstanceOf(ConferenceSeat);
    expect(api.conferences.participants("warm-1")).toEqual([a, b]);
    const out = new Int16Array(160);
    sa!.say(new Int16Array(160).fill(1200));
    expect(sb!.hear(out)).toBe(true);
    expect(out.every((v) => v === 1200)).toBe(true);
    expect(sa!.hear(out)).toBe(false);
    sb!.hangUp();
    expect(sb!.left.reason).toBe("hung-up");
    expect(sa!.left.reason).toBe("conference-ended");
    expect(api.conferences.participants("warm-1")).toEqual([]);
  });

  it("ends a followed call's stream on new TwiML and keeps what it was told", async () => {
    const sid = newCallSid();
    const call = api.follow(sid);
    const control = restCallControl({
      accountSid: ACCOUNT,
      authToken: TOKEN,
      httpClient: rebasedClient(api.url),
    });
    expect(call.ended.aborted).toBe(false);
    await control.updateTwiml(sid, new twilio.twiml.VoiceResponse().dial("+15550100").toString());
    expect(call.ended.aborted).toBe(true);
    expect(call.updates).toEqual([expect.objectContaining({ dial: "+15550100", hangUp: false })]);
    api.forget(sid);
    await expect(control.updateTwiml(sid, "<Response><Hangup/></Response>")).rejects.toMatchObject({
      status: 404,
    });
    const stranger = restCallControl({
      accountSid: ACCOUNT,
      authToken: "wrong",
      httpClient: rebasedClient(api.url),
    });
    api.follow(sid);
    await expect(stranger.updateTwiml(sid, "<Response><Hangup/></Response>")).rejects.toMatchObject({
      status: 401,
    });
  });
});
